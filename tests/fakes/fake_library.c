/* A generic stand-in shared library for the native probe's tests.
 *   -DFAKE_ABORT_IN_CONSTRUCTOR   abort() while being loaded (a library that kills its loader)
 *   -DFAKE_HANG_IN_CONSTRUCTOR    never finish loading (a loader that hangs)
 *   -DFAKE_CUDNN_VERSION=90100    export cudnnGetVersion/cudnnGetCudartVersion (a fake cuDNN)
 *   -DFAKE_CUDNN_CUDART=12020
 *   -DFAKE_CUDART_VERSION=12020   export cudaRuntimeGetVersion/cudaDriverGetVersion (a fake cudart)
 *   -DFAKE_CUDART_RC=0            … and the status they return (35 = cudaErrorInsufficientDriver)
 *   -DFAKE_CUDART_DRIVER=12020
 */
#include <stdlib.h>
#include <stddef.h>
#include <unistd.h>

#if defined(FAKE_ABORT_IN_CONSTRUCTOR) || defined(FAKE_HANG_IN_CONSTRUCTOR)
__attribute__((constructor)) static void on_load(void) {
#ifdef FAKE_ABORT_IN_CONSTRUCTOR
    abort();
#else
    for (;;) sleep(1);
#endif
}
#endif

#ifdef FAKE_CUDNN_VERSION
#ifndef FAKE_CUDNN_CUDART
#define FAKE_CUDNN_CUDART 12020
#endif
size_t cudnnGetVersion(void) { return FAKE_CUDNN_VERSION; }
size_t cudnnGetCudartVersion(void) { return FAKE_CUDNN_CUDART; }
#endif

#ifdef FAKE_CUDART_VERSION
#ifndef FAKE_CUDART_RC
#define FAKE_CUDART_RC 0
#endif
#ifndef FAKE_CUDART_DRIVER
#define FAKE_CUDART_DRIVER FAKE_CUDART_VERSION
#endif
int cudaRuntimeGetVersion(int *version) {
    *version = FAKE_CUDART_RC == 0 ? FAKE_CUDART_VERSION : 0;
    return FAKE_CUDART_RC;
}
int cudaDriverGetVersion(int *version) { *version = FAKE_CUDART_DRIVER; return 0; }
#endif

int fake_library_marker(void) { return 42; }
