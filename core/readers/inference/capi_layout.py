"""The OrtApi function table of ONNX Runtime's C API, as data: names in their fixed order.

``struct OrtApi`` (include/onnxruntime/core/session/onnxruntime_c_api.h) is a table of function
pointers that only ever grows at its end: an entry's index never changes in a later release, so
a table read from one header addresses every library of that API version or newer. The C-API
probe child (core/readers/probes/ort_capi_child.py, self-contained) carries the indices it calls; a test
checks them against this table.

Source: microsoft/onnxruntime, include/onnxruntime/core/session/onnxruntime_c_api.h at commit
0017800f6539412b364502d8b59c11463a6411e6 (``#define ORT_API_VERSION 13``; its last entry,
``MemoryInfoGetDeviceType``, is marked "since Version 1.14"). Checked against the real libraries
1.23.2 (onnxruntime-node, onnxruntime-gpu) and 1.31.1 (onnxruntime-gpu): CreateStatus,
GetErrorCode, GetErrorMessage, GetAvailableProviders and a whole session run answer as documented.
"""

from __future__ import annotations

HEADER_SOURCE = (
    "microsoft/onnxruntime include/onnxruntime/core/session/onnxruntime_c_api.h "
    "@ 0017800f6539412b364502d8b59c11463a6411e6 (ORT_API_VERSION 13)"
)

#: Every entry of struct OrtApi in order (index = position), up to the header's version.
ORT_API_FUNCTIONS: tuple[str, ...] = (
    "CreateStatus",  # 0
    "GetErrorCode",  # 1
    "GetErrorMessage",  # 2
    "CreateEnv",  # 3
    "CreateEnvWithCustomLogger",  # 4
    "EnableTelemetryEvents",  # 5
    "DisableTelemetryEvents",  # 6
    "CreateSession",  # 7
    "CreateSessionFromArray",  # 8
    "Run",  # 9
    "CreateSessionOptions",  # 10
    "SetOptimizedModelFilePath",  # 11
    "CloneSessionOptions",  # 12
    "SetSessionExecutionMode",  # 13
    "EnableProfiling",  # 14
    "DisableProfiling",  # 15
    "EnableMemPattern",  # 16
    "DisableMemPattern",  # 17
    "EnableCpuMemArena",  # 18
    "DisableCpuMemArena",  # 19
    "SetSessionLogId",  # 20
    "SetSessionLogVerbosityLevel",  # 21
    "SetSessionLogSeverityLevel",  # 22
    "SetSessionGraphOptimizationLevel",  # 23
    "SetIntraOpNumThreads",  # 24
    "SetInterOpNumThreads",  # 25
    "CreateCustomOpDomain",  # 26
    "CustomOpDomain_Add",  # 27
    "AddCustomOpDomain",  # 28
    "RegisterCustomOpsLibrary",  # 29
    "SessionGetInputCount",  # 30
    "SessionGetOutputCount",  # 31
    "SessionGetOverridableInitializerCount",  # 32
    "SessionGetInputTypeInfo",  # 33
    "SessionGetOutputTypeInfo",  # 34
    "SessionGetOverridableInitializerTypeInfo",  # 35
    "SessionGetInputName",  # 36
    "SessionGetOutputName",  # 37
    "SessionGetOverridableInitializerName",  # 38
    "CreateRunOptions",  # 39
    "RunOptionsSetRunLogVerbosityLevel",  # 40
    "RunOptionsSetRunLogSeverityLevel",  # 41
    "RunOptionsSetRunTag",  # 42
    "RunOptionsGetRunLogVerbosityLevel",  # 43
    "RunOptionsGetRunLogSeverityLevel",  # 44
    "RunOptionsGetRunTag",  # 45
    "RunOptionsSetTerminate",  # 46
    "RunOptionsUnsetTerminate",  # 47
    "CreateTensorAsOrtValue",  # 48
    "CreateTensorWithDataAsOrtValue",  # 49
    "IsTensor",  # 50
    "GetTensorMutableData",  # 51
    "FillStringTensor",  # 52
    "GetStringTensorDataLength",  # 53
    "GetStringTensorContent",  # 54
    "CastTypeInfoToTensorInfo",  # 55
    "GetOnnxTypeFromTypeInfo",  # 56
    "CreateTensorTypeAndShapeInfo",  # 57
    "SetTensorElementType",  # 58
    "SetDimensions",  # 59
    "GetTensorElementType",  # 60
    "GetDimensionsCount",  # 61
    "GetDimensions",  # 62
    "GetSymbolicDimensions",  # 63
    "GetTensorShapeElementCount",  # 64
    "GetTensorTypeAndShape",  # 65
    "GetTypeInfo",  # 66
    "GetValueType",  # 67
    "CreateMemoryInfo",  # 68
    "CreateCpuMemoryInfo",  # 69
    "CompareMemoryInfo",  # 70
    "MemoryInfoGetName",  # 71
    "MemoryInfoGetId",  # 72
    "MemoryInfoGetMemType",  # 73
    "MemoryInfoGetType",  # 74
    "AllocatorAlloc",  # 75
    "AllocatorFree",  # 76
    "AllocatorGetInfo",  # 77
    "GetAllocatorWithDefaultOptions",  # 78
    "AddFreeDimensionOverride",  # 79
    "GetValue",  # 80
    "GetValueCount",  # 81
    "CreateValue",  # 82
    "CreateOpaqueValue",  # 83
    "GetOpaqueValue",  # 84
    "KernelInfoGetAttribute_float",  # 85
    "KernelInfoGetAttribute_int64",  # 86
    "KernelInfoGetAttribute_string",  # 87
    "KernelContext_GetInputCount",  # 88
    "KernelContext_GetOutputCount",  # 89
    "KernelContext_GetInput",  # 90
    "KernelContext_GetOutput",  # 91
    "ReleaseEnv",  # 92
    "ReleaseStatus",  # 93
    "ReleaseMemoryInfo",  # 94
    "ReleaseSession",  # 95
    "ReleaseValue",  # 96
    "ReleaseRunOptions",  # 97
    "ReleaseTypeInfo",  # 98
    "ReleaseTensorTypeAndShapeInfo",  # 99
    "ReleaseSessionOptions",  # 100
    "ReleaseCustomOpDomain",  # 101
    "GetDenotationFromTypeInfo",  # 102
    "CastTypeInfoToMapTypeInfo",  # 103
    "CastTypeInfoToSequenceTypeInfo",  # 104
    "GetMapKeyType",  # 105
    "GetMapValueType",  # 106
    "GetSequenceElementType",  # 107
    "ReleaseMapTypeInfo",  # 108
    "ReleaseSequenceTypeInfo",  # 109
    "SessionEndProfiling",  # 110
    "SessionGetModelMetadata",  # 111
    "ModelMetadataGetProducerName",  # 112
    "ModelMetadataGetGraphName",  # 113
    "ModelMetadataGetDomain",  # 114
    "ModelMetadataGetDescription",  # 115
    "ModelMetadataLookupCustomMetadataMap",  # 116
    "ModelMetadataGetVersion",  # 117
    "ReleaseModelMetadata",  # 118
    "CreateEnvWithGlobalThreadPools",  # 119
    "DisablePerSessionThreads",  # 120
    "CreateThreadingOptions",  # 121
    "ReleaseThreadingOptions",  # 122
    "ModelMetadataGetCustomMetadataMapKeys",  # 123
    "AddFreeDimensionOverrideByName",  # 124
    "GetAvailableProviders",  # 125
    "ReleaseAvailableProviders",  # 126
    "GetStringTensorElementLength",  # 127
    "GetStringTensorElement",  # 128
    "FillStringTensorElement",  # 129
    "AddSessionConfigEntry",  # 130
    "CreateAllocator",  # 131
    "ReleaseAllocator",  # 132
    "RunWithBinding",  # 133
    "CreateIoBinding",  # 134
    "ReleaseIoBinding",  # 135
    "BindInput",  # 136
    "BindOutput",  # 137
    "BindOutputToDevice",  # 138
    "GetBoundOutputNames",  # 139
    "GetBoundOutputValues",  # 140
    "ClearBoundInputs",  # 141
    "ClearBoundOutputs",  # 142
    "TensorAt",  # 143
    "CreateAndRegisterAllocator",  # 144
    "SetLanguageProjection",  # 145
    "SessionGetProfilingStartTimeNs",  # 146
    "SetGlobalIntraOpNumThreads",  # 147
    "SetGlobalInterOpNumThreads",  # 148
    "SetGlobalSpinControl",  # 149
    "AddInitializer",  # 150
    "CreateEnvWithCustomLoggerAndGlobalThreadPools",  # 151
    "SessionOptionsAppendExecutionProvider_CUDA",  # 152
    "SessionOptionsAppendExecutionProvider_ROCM",  # 153
    "SessionOptionsAppendExecutionProvider_OpenVINO",  # 154
    "SetGlobalDenormalAsZero",  # 155
    "CreateArenaCfg",  # 156
    "ReleaseArenaCfg",  # 157
    "ModelMetadataGetGraphDescription",  # 158
    "SessionOptionsAppendExecutionProvider_TensorRT",  # 159
    "SetCurrentGpuDeviceId",  # 160
    "GetCurrentGpuDeviceId",  # 161
    "KernelInfoGetAttributeArray_float",  # 162
    "KernelInfoGetAttributeArray_int64",  # 163
    "CreateArenaCfgV2",  # 164
    "AddRunConfigEntry",  # 165
    "CreatePrepackedWeightsContainer",  # 166
    "ReleasePrepackedWeightsContainer",  # 167
    "CreateSessionWithPrepackedWeightsContainer",  # 168
    "CreateSessionFromArrayWithPrepackedWeightsContainer",  # 169
    "SessionOptionsAppendExecutionProvider_TensorRT_V2",  # 170
    "CreateTensorRTProviderOptions",  # 171
    "UpdateTensorRTProviderOptions",  # 172
    "GetTensorRTProviderOptionsAsString",  # 173
    "ReleaseTensorRTProviderOptions",  # 174
    "EnableOrtCustomOps",  # 175
    "RegisterAllocator",  # 176
    "UnregisterAllocator",  # 177
    "IsSparseTensor",  # 178
    "CreateSparseTensorAsOrtValue",  # 179
    "FillSparseTensorCoo",  # 180
    "FillSparseTensorCsr",  # 181
    "FillSparseTensorBlockSparse",  # 182
    "CreateSparseTensorWithValuesAsOrtValue",  # 183
    "UseCooIndices",  # 184
    "UseCsrIndices",  # 185
    "UseBlockSparseIndices",  # 186
    "GetSparseTensorFormat",  # 187
    "GetSparseTensorValuesTypeAndShape",  # 188
    "GetSparseTensorValues",  # 189
    "GetSparseTensorIndicesTypeShape",  # 190
    "GetSparseTensorIndices",  # 191
    "HasValue",  # 192
    "KernelContext_GetGPUComputeStream",  # 193
    "GetTensorMemoryInfo",  # 194
    "GetExecutionProviderApi",  # 195
    "SessionOptionsSetCustomCreateThreadFn",  # 196
    "SessionOptionsSetCustomThreadCreationOptions",  # 197
    "SessionOptionsSetCustomJoinThreadFn",  # 198
    "SetGlobalCustomCreateThreadFn",  # 199
    "SetGlobalCustomThreadCreationOptions",  # 200
    "SetGlobalCustomJoinThreadFn",  # 201
    "SynchronizeBoundInputs",  # 202
    "SynchronizeBoundOutputs",  # 203
    "SessionOptionsAppendExecutionProvider_CUDA_V2",  # 204
    "CreateCUDAProviderOptions",  # 205
    "UpdateCUDAProviderOptions",  # 206
    "GetCUDAProviderOptionsAsString",  # 207
    "ReleaseCUDAProviderOptions",  # 208
    "SessionOptionsAppendExecutionProvider_MIGraphX",  # 209
    "AddExternalInitializers",  # 210
    "CreateOpAttr",  # 211
    "ReleaseOpAttr",  # 212
    "CreateOp",  # 213
    "InvokeOp",  # 214
    "ReleaseOp",  # 215
    "SessionOptionsAppendExecutionProvider",  # 216
    "CopyKernelInfo",  # 217
    "ReleaseKernelInfo",  # 218
    "GetTrainingApi",  # 219
    "SessionOptionsAppendExecutionProvider_CANN",  # 220
    "CreateCANNProviderOptions",  # 221
    "UpdateCANNProviderOptions",  # 222
    "GetCANNProviderOptionsAsString",  # 223
    "ReleaseCANNProviderOptions",  # 224
    "MemoryInfoGetDeviceType",  # 225
)


def api_index(name: str) -> int:
    """The index of ``name`` in struct OrtApi (ValueError when the header has no such entry)."""
    return ORT_API_FUNCTIONS.index(name)
