// The subset of the NVML C API that Vigil uses, declared here because no
// NVIDIA header is installed at build time and the library is loaded with
// dlopen (DESIGN.md "GPU without a GPU").
//
// Everything below must match nvml.h's ABI exactly: enum values, struct
// layouts and the `version` words of versioned structs. A wrong layout does
// not fail to compile; it corrupts memory inside a real driver. The
// static_asserts at the end pin the sizes and offsets nvml.h implies, and the
// fake NVML (tests/fake_nvml) is compiled against the same function pointer
// types so a signature drift breaks its build.
//
// Types live in vigil::nvml so that a translation unit that also includes the
// real nvml.h does not clash.
#pragma once

#include <cstddef>

namespace vigil::nvml {

// nvmlReturn_t is a C enum in nvml.h (int-sized).
enum nvmlReturn_t : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_ENABLED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_UNKNOWN = 999,
};

enum nvmlEnableState_t : int { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };
enum nvmlTemperatureSensors_t : int { NVML_TEMPERATURE_GPU = 0 };
enum nvmlTemperatureThresholds_t : int {
  NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
  NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
  NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
  NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3,
};
enum nvmlClockType_t : int {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3,
};
enum nvmlPcieUtilCounter_t : int { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };
enum nvmlMemoryErrorType_t : int {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
};
enum nvmlEccCounterType_t : int { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };

// nvmlClocksEventReason* / nvmlClocksThrottleReason* bits (same values).
inline constexpr unsigned long long kClocksEventGpuIdle = 0x1ULL;
inline constexpr unsigned long long kClocksEventApplicationsClocksSetting = 0x2ULL;
inline constexpr unsigned long long kClocksEventSwPowerCap = 0x4ULL;
inline constexpr unsigned long long kClocksEventHwSlowdown = 0x8ULL;
inline constexpr unsigned long long kClocksEventSyncBoost = 0x10ULL;
inline constexpr unsigned long long kClocksEventSwThermalSlowdown = 0x20ULL;
inline constexpr unsigned long long kClocksEventHwThermalSlowdown = 0x40ULL;
inline constexpr unsigned long long kClocksEventHwPowerBrakeSlowdown = 0x80ULL;
inline constexpr unsigned long long kClocksEventDisplayClockSetting = 0x100ULL;

// nvmlEventTypeXidCriticalError.
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8ULL;
// NVML_VALUE_NOT_AVAILABLE for unsigned long long fields (usedGpuMemory).
inline constexpr unsigned long long kValueNotAvailableULL = ~0ULL;

// Buffer sizes from nvml.h (the _V2 sizes are the larger, current ones).
inline constexpr unsigned int kDeviceNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned int kDeviceUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned int kSystemDriverVersionBufferSize = 80;
inline constexpr unsigned int kSystemNvmlVersionBufferSize = 80;
inline constexpr unsigned int kPciBusIdBufferSize = 32;        // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
inline constexpr unsigned int kPciBusIdLegacyBufferSize = 16;  // ..._BUFFER_V2_SIZE

struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlEventSet_st;
using nvmlEventSet_t = nvmlEventSet_st*;
struct nvmlGpmSample_st;
using nvmlGpmSample_t = nvmlGpmSample_st*;

struct nvmlUtilization_t {
  unsigned int gpu;     // percent of time a kernel was running
  unsigned int memory;  // percent of time device memory was read or written
};

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;  // includes memory reserved by the driver
};

struct nvmlMemory_v2_t {
  unsigned int version;  // must be kNvmlMemoryV2Version
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;  // excludes `reserved`
};
// NVML_STRUCT_VERSION(Memory, 2) = sizeof(nvmlMemory_v2_t) | (2 << 24).
inline constexpr unsigned int kNvmlMemoryV2Version =
    static_cast<unsigned int>(sizeof(nvmlMemory_v2_t)) | (2U << 24U);

struct nvmlPciInfo_t {
  char busIdLegacy[kPciBusIdLegacyBufferSize];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[kPciBusIdBufferSize];  // "00000000:3B:00.0"
};

// nvmlProcessInfo_v2_t, also named nvmlProcessInfo_t: what the _v2 and _v3
// process queries fill. (The v1 struct has only pid and usedGpuMemory.)
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or kValueNotAvailableULL
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the Xid for kEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

// --- GPM (Hopper and later) ---
enum nvmlGpmMetricId_t : int {
  NVML_GPM_METRIC_GRAPHICS_UTIL = 1,
  NVML_GPM_METRIC_SM_UTIL = 2,
  NVML_GPM_METRIC_SM_OCCUPANCY = 3,
  NVML_GPM_METRIC_INTEGER_UTIL = 4,
  NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
  NVML_GPM_METRIC_DFMA_TENSOR_UTIL = 6,
  NVML_GPM_METRIC_HMMA_TENSOR_UTIL = 7,
  NVML_GPM_METRIC_IMMA_TENSOR_UTIL = 9,
  NVML_GPM_METRIC_DRAM_BW_UTIL = 10,
  NVML_GPM_METRIC_FP64_UTIL = 11,
  NVML_GPM_METRIC_FP32_UTIL = 12,
  NVML_GPM_METRIC_FP16_UTIL = 13,
};

struct nvmlGpmSupport_t {
  unsigned int version;  // NVML_GPM_SUPPORT_VERSION (plain 1, not NVML_STRUCT_VERSION)
  unsigned int isSupportedDevice;
};
inline constexpr unsigned int kGpmSupportVersion = 1;

struct nvmlGpmMetric_t {
  unsigned int metricId;    // in
  nvmlReturn_t nvmlReturn;  // out
  double value;             // out; utilisations are 0.0..100.0
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;  // out
};

// The driver reads only `numMetrics` entries, so our array may be shorter than
// nvml.h's NVML_GPM_METRIC_MAX (98, 210 or 333 depending on the header).
inline constexpr unsigned int kGpmMaxMetricsPerCall = 16;
struct nvmlGpmMetricsGet_t {
  unsigned int version;  // NVML_GPM_METRICS_GET_VERSION (plain 1)
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[kGpmMaxMetricsPerCall];
};
inline constexpr unsigned int kGpmMetricsGetVersion = 1;

// ABI pins, from the layouts in nvml.h on LP64 Linux.
static_assert(sizeof(nvmlReturn_t) == 4);
static_assert(sizeof(nvmlUtilization_t) == 8);
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40 && offsetof(nvmlMemory_v2_t, total) == 8);
static_assert(kNvmlMemoryV2Version == 0x02000028);
static_assert(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, busId) == 36);
static_assert(sizeof(nvmlProcessInfo_t) == 24 && offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8);
static_assert(sizeof(nvmlEventData_t) == 32 && offsetof(nvmlEventData_t, eventData) == 16);
static_assert(sizeof(nvmlGpmSupport_t) == 8);
static_assert(sizeof(nvmlGpmMetric_t) == 40 && offsetof(nvmlGpmMetric_t, value) == 8);
static_assert(offsetof(nvmlGpmMetricsGet_t, sample1) == 8 &&
              offsetof(nvmlGpmMetricsGet_t, metrics) == 24);

// X-macros over every function Vigil resolves: X(name, return type, params).
// Required: without these NVML is unusable and the driver counts as failing.
#define VIGIL_NVML_REQUIRED_FUNCTIONS(X)                                            \
  X(nvmlInit_v2, nvmlReturn_t, (void))                                              \
  X(nvmlShutdown, nvmlReturn_t, (void))                                             \
  X(nvmlErrorString, const char*, (nvmlReturn_t result))                            \
  X(nvmlSystemGetDriverVersion, nvmlReturn_t, (char* version, unsigned int length)) \
  X(nvmlDeviceGetCount_v2, nvmlReturn_t, (unsigned int* count))                     \
  X(nvmlDeviceGetHandleByIndex_v2, nvmlReturn_t, (unsigned int index, nvmlDevice_t* device))

// Optional: a missing one turns its feature off (old driver, new API).
#define VIGIL_NVML_OPTIONAL_FUNCTIONS(X)                                                        \
  X(nvmlSystemGetNVMLVersion, nvmlReturn_t, (char* version, unsigned int length))               \
  X(nvmlSystemGetCudaDriverVersion_v2, nvmlReturn_t, (int* cuda_driver_version))                \
  X(nvmlDeviceGetName, nvmlReturn_t, (nvmlDevice_t device, char* name, unsigned int length))    \
  X(nvmlDeviceGetUUID, nvmlReturn_t, (nvmlDevice_t device, char* uuid, unsigned int length))    \
  X(nvmlDeviceGetMinorNumber, nvmlReturn_t, (nvmlDevice_t device, unsigned int* minor))         \
  X(nvmlDeviceGetCudaComputeCapability, nvmlReturn_t,                                           \
    (nvmlDevice_t device, int* major, int* minor))                                              \
  X(nvmlDeviceGetPciInfo_v3, nvmlReturn_t, (nvmlDevice_t device, nvmlPciInfo_t * pci))          \
  X(nvmlDeviceGetUtilizationRates, nvmlReturn_t,                                                \
    (nvmlDevice_t device, nvmlUtilization_t * utilization))                                     \
  X(nvmlDeviceGetMemoryInfo_v2, nvmlReturn_t, (nvmlDevice_t device, nvmlMemory_v2_t * memory))  \
  X(nvmlDeviceGetMemoryInfo, nvmlReturn_t, (nvmlDevice_t device, nvmlMemory_t * memory))        \
  X(nvmlDeviceGetTemperature, nvmlReturn_t,                                                     \
    (nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* temp))                 \
  X(nvmlDeviceGetTemperatureThreshold, nvmlReturn_t,                                            \
    (nvmlDevice_t device, nvmlTemperatureThresholds_t type, unsigned int* temp))                \
  X(nvmlDeviceGetPowerUsage, nvmlReturn_t, (nvmlDevice_t device, unsigned int* milliwatts))     \
  X(nvmlDeviceGetEnforcedPowerLimit, nvmlReturn_t,                                              \
    (nvmlDevice_t device, unsigned int* milliwatts))                                            \
  X(nvmlDeviceGetTotalEnergyConsumption, nvmlReturn_t,                                          \
    (nvmlDevice_t device, unsigned long long* millijoules))                                     \
  X(nvmlDeviceGetPcieThroughput, nvmlReturn_t,                                                  \
    (nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int* kb_per_s))               \
  X(nvmlDeviceGetClockInfo, nvmlReturn_t,                                                       \
    (nvmlDevice_t device, nvmlClockType_t type, unsigned int* mhz))                             \
  X(nvmlDeviceGetMaxClockInfo, nvmlReturn_t,                                                    \
    (nvmlDevice_t device, nvmlClockType_t type, unsigned int* mhz))                             \
  X(nvmlDeviceGetCurrentClocksEventReasons, nvmlReturn_t,                                       \
    (nvmlDevice_t device, unsigned long long* reasons))                                         \
  X(nvmlDeviceGetCurrentClocksThrottleReasons, nvmlReturn_t,                                    \
    (nvmlDevice_t device, unsigned long long* reasons))                                         \
  X(nvmlDeviceGetEccMode, nvmlReturn_t,                                                         \
    (nvmlDevice_t device, nvmlEnableState_t * current, nvmlEnableState_t * pending))            \
  X(nvmlDeviceGetTotalEccErrors, nvmlReturn_t,                                                  \
    (nvmlDevice_t device, nvmlMemoryErrorType_t error_type, nvmlEccCounterType_t counter_type,  \
     unsigned long long* count))                                                                \
  X(nvmlDeviceGetComputeRunningProcesses_v3, nvmlReturn_t,                                      \
    (nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos))                       \
  X(nvmlDeviceGetComputeRunningProcesses_v2, nvmlReturn_t,                                      \
    (nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos))                       \
  X(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlReturn_t,                                     \
    (nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos))                       \
  X(nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlReturn_t,                                     \
    (nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos))                       \
  X(nvmlGpmQueryDeviceSupport, nvmlReturn_t, (nvmlDevice_t device, nvmlGpmSupport_t * support)) \
  X(nvmlGpmSampleAlloc, nvmlReturn_t, (nvmlGpmSample_t * sample))                               \
  X(nvmlGpmSampleFree, nvmlReturn_t, (nvmlGpmSample_t sample))                                  \
  X(nvmlGpmSampleGet, nvmlReturn_t, (nvmlDevice_t device, nvmlGpmSample_t sample))              \
  X(nvmlGpmMetricsGet, nvmlReturn_t, (nvmlGpmMetricsGet_t * metrics_get))                       \
  X(nvmlEventSetCreate, nvmlReturn_t, (nvmlEventSet_t * set))                                   \
  X(nvmlEventSetFree, nvmlReturn_t, (nvmlEventSet_t set))                                       \
  X(nvmlDeviceGetSupportedEventTypes, nvmlReturn_t,                                             \
    (nvmlDevice_t device, unsigned long long* event_types))                                     \
  X(nvmlDeviceRegisterEvents, nvmlReturn_t,                                                     \
    (nvmlDevice_t device, unsigned long long event_types, nvmlEventSet_t set))                  \
  X(nvmlEventSetWait_v2, nvmlReturn_t,                                                          \
    (nvmlEventSet_t set, nvmlEventData_t * data, unsigned int timeout_ms))

// Function pointer types: PFN_<name>.
#define VIGIL_NVML_DECLARE_PFN(name, ret, params) using PFN_##name = ret(*) params;
VIGIL_NVML_REQUIRED_FUNCTIONS(VIGIL_NVML_DECLARE_PFN)
VIGIL_NVML_OPTIONAL_FUNCTIONS(VIGIL_NVML_DECLARE_PFN)
#undef VIGIL_NVML_DECLARE_PFN

// The resolved entry points; a null optional member means "not in this driver".
struct NvmlApi {
#define VIGIL_NVML_DECLARE_MEMBER(name, ret, params) PFN_##name name = nullptr;
  VIGIL_NVML_REQUIRED_FUNCTIONS(VIGIL_NVML_DECLARE_MEMBER)
  VIGIL_NVML_OPTIONAL_FUNCTIONS(VIGIL_NVML_DECLARE_MEMBER)
#undef VIGIL_NVML_DECLARE_MEMBER
};

}  // namespace vigil::nvml
