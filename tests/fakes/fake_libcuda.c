/* A stand-in for the NVIDIA driver's libcuda.so.1, for tests on machines without a GPU.
 *
 * It exports the few driver-API entry points the native probe calls, with the real
 * signatures (cuda.h) and results chosen at compile time:
 *   -DFAKE_DRIVER_VERSION=12020     what cuDriverGetVersion reports (1000*major + 10*minor)
 *   -DFAKE_CUINIT_RESULT=100        the CUresult of cuInit (100 CUDA_ERROR_NO_DEVICE, 35, 34 …)
 *   -DFAKE_DEVICE_COUNT=1           devices after a successful cuInit
 *   -DFAKE_CC_MAJOR=8 -DFAKE_CC_MINOR=6   their compute capability
 *   -DFAKE_HANG_IN_CUINIT           cuInit never returns (a hung driver)
 */
#include <string.h>
#include <unistd.h>

#ifndef FAKE_DRIVER_VERSION
#define FAKE_DRIVER_VERSION 12020
#endif
#ifndef FAKE_CUINIT_RESULT
#define FAKE_CUINIT_RESULT 0
#endif
#ifndef FAKE_DEVICE_COUNT
#define FAKE_DEVICE_COUNT 1
#endif
#ifndef FAKE_CC_MAJOR
#define FAKE_CC_MAJOR 8
#endif
#ifndef FAKE_CC_MINOR
#define FAKE_CC_MINOR 6
#endif

static int initialised = 0;

int cuDriverGetVersion(int *version) {
    if (!version) return 1; /* CUDA_ERROR_INVALID_VALUE */
    *version = FAKE_DRIVER_VERSION;
    return 0;
}

int cuInit(unsigned int flags) {
    (void)flags;
#ifdef FAKE_HANG_IN_CUINIT
    for (;;) sleep(1);
#endif
    if (FAKE_CUINIT_RESULT == 0) initialised = 1;
    return FAKE_CUINIT_RESULT;
}

int cuGetErrorName(int error, const char **name) {
    if (!name) return 1;
    switch (error) {
    case 0: *name = "CUDA_SUCCESS"; return 0;
    case 3: *name = "CUDA_ERROR_NOT_INITIALIZED"; return 0;
    case 34: *name = "CUDA_ERROR_STUB_LIBRARY"; return 0;
    case 100: *name = "CUDA_ERROR_NO_DEVICE"; return 0;
    case 803: *name = "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"; return 0;
    case 804: *name = "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"; return 0;
    case 999: *name = "CUDA_ERROR_UNKNOWN"; return 0;
    default: *name = 0; return 1; /* CUDA_ERROR_INVALID_VALUE, as the real one for unknown codes */
    }
}

int cuDeviceGetCount(int *count) {
    if (!initialised) return 3; /* CUDA_ERROR_NOT_INITIALIZED */
    *count = FAKE_DEVICE_COUNT;
    return 0;
}

int cuDeviceGet(int *device, int ordinal) {
    if (!initialised) return 3;
    if (ordinal < 0 || ordinal >= FAKE_DEVICE_COUNT) return 101; /* CUDA_ERROR_INVALID_DEVICE */
    *device = ordinal;
    return 0;
}

int cuDeviceGetName(char *name, int len, int device) {
    (void)device;
    if (!initialised) return 3;
    strncpy(name, "Fake NVIDIA GPU", (size_t)len);
    if (len > 0) name[len - 1] = 0;
    return 0;
}

int cuDeviceGetAttribute(int *value, int attribute, int device) {
    (void)device;
    if (!initialised) return 3;
    if (attribute == 75) { *value = FAKE_CC_MAJOR; return 0; }
    if (attribute == 76) { *value = FAKE_CC_MINOR; return 0; }
    *value = 0;
    return 0;
}
