/* A stand-in for the NVIDIA driver's libnvidia-ml.so.1 (NVML), for tests without a GPU.
 *
 * Exports what nvidia-ml-py (pynvml) calls for the driver collector, with nvml.h's
 * signatures; results chosen at compile time:
 *   -DFAKE_NVML_INIT_RESULT=18       nvmlReturn_t of nvmlInit* (18 LIB_RM_VERSION_MISMATCH,
 *                                    9 DRIVER_NOT_LOADED, 4 NO_PERMISSION …; 0 = works)
 *   -DFAKE_DRIVER_VERSION="\"470.57.02\""   nvmlSystemGetDriverVersion
 *   -DFAKE_CUDA_DRIVER_VERSION=11040 nvmlSystemGetCudaDriverVersion(_v2)
 *   -DFAKE_NO_LIBCUDA                _v2 returns NVML_ERROR_LIBRARY_NOT_FOUND (libcuda missing)
 *   -DFAKE_GPU_COUNT=1 -DFAKE_CC_MAJOR=8 -DFAKE_CC_MINOR=6 -DFAKE_GPU_NAME="\"...\""
 */
#include <string.h>

#ifndef FAKE_NVML_INIT_RESULT
#define FAKE_NVML_INIT_RESULT 0
#endif
#ifndef FAKE_DRIVER_VERSION
#define FAKE_DRIVER_VERSION "580.65.06"
#endif
#ifndef FAKE_CUDA_DRIVER_VERSION
#define FAKE_CUDA_DRIVER_VERSION 13000
#endif
#ifndef FAKE_GPU_COUNT
#define FAKE_GPU_COUNT 1
#endif
#ifndef FAKE_CC_MAJOR
#define FAKE_CC_MAJOR 8
#endif
#ifndef FAKE_CC_MINOR
#define FAKE_CC_MINOR 6
#endif
#ifndef FAKE_GPU_NAME
#define FAKE_GPU_NAME "NVIDIA Fake A10"
#endif

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
static int handles[16];
static int initialised = 0;

static int init(void) {
    if (FAKE_NVML_INIT_RESULT == 0) initialised++;
    return FAKE_NVML_INIT_RESULT;
}
int nvmlInit(void) { return init(); }
int nvmlInit_v2(void) { return init(); }
int nvmlInitWithFlags(unsigned int flags) { (void)flags; return init(); }
int nvmlShutdown(void) { if (initialised > 0) initialised--; return 0; }

const char *nvmlErrorString(int result) {
    switch (result) {
    case 0: return "Success";
    case 18: return "RM has detected an NVML/RM version mismatch.";
    default: return "Unknown Error";
    }
}

int nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (!initialised) return 1; /* NVML_ERROR_UNINITIALIZED */
    strncpy(version, FAKE_DRIVER_VERSION, length);
    if (length) version[length - 1] = 0;
    return 0;
}

int nvmlSystemGetCudaDriverVersion(int *version) {
    if (!initialised) return 1;
    *version = FAKE_CUDA_DRIVER_VERSION;
    return 0;
}

int nvmlSystemGetCudaDriverVersion_v2(int *version) {
    if (!initialised) return 1;
#ifdef FAKE_NO_LIBCUDA
    (void)version;
    return 12; /* NVML_ERROR_LIBRARY_NOT_FOUND: libcuda could not be loaded */
#else
    *version = FAKE_CUDA_DRIVER_VERSION;
    return 0;
#endif
}

int nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialised) return 1;
    *count = FAKE_GPU_COUNT;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **device) {
    if (!initialised) return 1;
    if (index >= FAKE_GPU_COUNT || index >= 16) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *device = &handles[index];
    return 0;
}

int nvmlDeviceGetName(void *device, char *name, unsigned int length) {
    (void)device;
    strncpy(name, FAKE_GPU_NAME, length);
    if (length) name[length - 1] = 0;
    return 0;
}

int nvmlDeviceGetCudaComputeCapability(void *device, int *major, int *minor) {
    (void)device;
    *major = FAKE_CC_MAJOR;
    *minor = FAKE_CC_MINOR;
    return 0;
}

int nvmlDeviceGetMemoryInfo(void *device, nvmlMemory_t *memory) {
    (void)device;
    memory->total = 24ULL * 1024 * 1024 * 1024;
    memory->free = memory->total;
    memory->used = 0;
    return 0;
}

int nvmlDeviceGetUUID(void *device, char *uuid, unsigned int length) {
    (void)device;
    strncpy(uuid, "GPU-00000000-1111-2222-3333-444444444444", length);
    if (length) uuid[length - 1] = 0;
    return 0;
}
