/* device.c — Vulkan instance, physical-device enumeration and caps (read once into struct
   vk_caps), the `auto` device choice, and the logical device with its one compute queue
   (docs/ARCHITECTURE.md, "The Vulkan backend"). Also VkResult -> SEER_EDEVICE conversion.
   Divisions: results and errors; instance (+ validation layer); probing one device; the device
   list and auto choice; opening and closing the backend's device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/log.h"
#include "core/util.h"
#include "vulkan/vk_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define SEER_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SEER_LSAN 1
#endif
#endif
#ifdef SEER_LSAN
#include <sanitizer/lsan_interface.h>
#endif

/* ---- results and errors ------------------------------------------------------------------ */

const char *vk_result_name(VkResult r)
{
    switch (r) {
#define R(x) case x: return #x
        R(VK_SUCCESS); R(VK_NOT_READY); R(VK_TIMEOUT); R(VK_EVENT_SET); R(VK_EVENT_RESET); R(VK_INCOMPLETE);
        R(VK_ERROR_OUT_OF_HOST_MEMORY); R(VK_ERROR_OUT_OF_DEVICE_MEMORY); R(VK_ERROR_INITIALIZATION_FAILED);
        R(VK_ERROR_DEVICE_LOST); R(VK_ERROR_MEMORY_MAP_FAILED); R(VK_ERROR_LAYER_NOT_PRESENT);
        R(VK_ERROR_EXTENSION_NOT_PRESENT); R(VK_ERROR_FEATURE_NOT_PRESENT); R(VK_ERROR_INCOMPATIBLE_DRIVER);
        R(VK_ERROR_TOO_MANY_OBJECTS); R(VK_ERROR_FORMAT_NOT_SUPPORTED); R(VK_ERROR_FRAGMENTED_POOL);
        R(VK_ERROR_UNKNOWN); R(VK_ERROR_OUT_OF_POOL_MEMORY); R(VK_ERROR_INVALID_EXTERNAL_HANDLE);
        R(VK_ERROR_FRAGMENTATION); R(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS); R(VK_PIPELINE_COMPILE_REQUIRED);
        R(VK_ERROR_INVALID_SHADER_NV);
#undef R
    default: return "unrecognised VkResult";
    }
}

int vk_fail(VkResult r, const char *call)
{
    int code = (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY) ? SEER_ENOMEM : SEER_EDEVICE;
    return seer_err(code, "vulkan: %s failed: %s (%d)", call, vk_result_name(r), (int)r);
}

int vk_fail_on(const struct vk_ctx *vk, VkResult r, const char *what)
{
    const char *name = vk->info.name[0] ? vk->info.name : "(unnamed device)";
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
        return seer_err(SEER_ENOMEM, "vulkan: %s: out of %s memory (%s) in %s", name,
                        r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? "device" : "host", vk_result_name(r), what);
    if (r == VK_ERROR_DEVICE_LOST)
        return seer_err(SEER_EDEVICE, "vulkan: %s: the device was lost (%s) in %s; nothing more runs on it", name,
                        vk_result_name(r), what);
    return seer_err(SEER_EDEVICE, "vulkan: %s: %s failed: %s (%d)", name, what, vk_result_name(r), (int)r);
}

/* ---- instance ---------------------------------------------------------------------------- */

static const char validation_layer[] = "VK_LAYER_KHRONOS_validation";

/* The layer may call this from driver threads: it only touches an atomic and the thread-safe log. */
static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                    VkDebugUtilsMessageTypeFlagsEXT types,
                                                    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)types;
    const char *msg = data && data->pMessage ? data->pMessage : "(no message)";
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        atomic_fetch_add((_Atomic uint64_t *)user, 1);
        LOG_ERROR("vulkan", "validation: %s", msg);
    } else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        LOG_WARN("vulkan", "validation: %s", msg);
    } else {
        LOG_DEBUG("vulkan", "validation: %s", msg);
    }
    return VK_FALSE; /* never abort the call that triggered it */
}

static bool has_ext(const VkExtensionProperties *e, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(e[i].extensionName, name))
            return true;
    return false;
}

/* Instance extensions offered by the loader (layer NULL) or by one layer; *out freed by caller. */
static int instance_exts(const char *layer, VkExtensionProperties **out, uint32_t *n)
{
    *out = NULL;
    *n = 0;
    VkResult r = vkEnumerateInstanceExtensionProperties(layer, n, NULL);
    if (r != VK_SUCCESS)
        return vk_fail(r, "vkEnumerateInstanceExtensionProperties");
    if (*n == 0)
        return SEER_OK;
    *out = seer_calloc(*n, sizeof **out);
    if (!*out)
        return seer_err(SEER_ENOMEM, "vulkan: no memory for %u extension names", *n);
    r = vkEnumerateInstanceExtensionProperties(layer, n, *out);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        seer_freep(out);
        return vk_fail(r, "vkEnumerateInstanceExtensionProperties");
    }
    return SEER_OK;
}

static bool layer_installed(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkLayerProperties *l = seer_calloc(n, sizeof *l);
    bool found = false;
    if (l && vkEnumerateInstanceLayerProperties(&n, l) >= VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = !strcmp(l[i].layerName, name);
    free(l);
    return found;
}

/* Creates the instance. With `validation` and the layer installed, enables it with
   synchronization validation (our barriers are what it checks) and a messenger counting errors
   into *errors; *validation_on says whether that happened. */
static int instance_create(bool validation, _Atomic uint64_t *errors, VkInstance *out,
                           VkDebugUtilsMessengerEXT *messenger, bool *validation_on)
{
    uint32_t version = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion(&version) != VK_SUCCESS || version < VK_API_VERSION_1_1)
        return seer_err(SEER_EUNSUPPORTED, "vulkan: the loader offers Vulkan %u.%u; seer needs 1.1",
                        VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
    VkExtensionProperties *exts;
    uint32_t n_exts;
    int rc = instance_exts(NULL, &exts, &n_exts);
    if (rc)
        return rc;
    const char *enable[4];
    uint32_t n_enable = 0;
    VkInstanceCreateFlags flags = 0;
    /* MoltenVK and other portability drivers are only listed when asked for. */
    if (has_ext(exts, n_exts, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
        enable[n_enable++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
        flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    }
    bool layer = false, sync_val = false;
    if (validation) {
        layer = layer_installed(validation_layer) && has_ext(exts, n_exts, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
        if (!layer)
            LOG_WARN("vulkan", "validation requested but %s (with VK_EXT_debug_utils) is not installed",
                     validation_layer);
    }
    if (layer) {
        VkExtensionProperties *lexts;
        uint32_t n_lexts;
        if (instance_exts(validation_layer, &lexts, &n_lexts) == SEER_OK) {
            sync_val = has_ext(lexts, n_lexts, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
            free(lexts);
        }
        enable[n_enable++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
        if (sync_val)
            enable[n_enable++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;
    }
    free(exts);

    VkDebugUtilsMessengerCreateInfoEXT dbg = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_validation,
        .pUserData = (void *)errors,
    };
    const VkValidationFeatureEnableEXT val_enable[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT val_features = {
        .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
        .pNext = &dbg,
        .enabledValidationFeatureCount = 1,
        .pEnabledValidationFeatures = val_enable,
    };
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "seer",
        .pEngineName = "seer",
        /* The highest version we use features of; devices of 1.1 still work under it. */
        .apiVersion = version < VK_API_VERSION_1_3 ? version : VK_API_VERSION_1_3,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        /* chained so that instance creation and destruction are validated too */
        .pNext = layer ? (sync_val ? (const void *)&val_features : (const void *)&dbg) : NULL,
        .flags = flags,
        .pApplicationInfo = &app,
        .enabledLayerCount = layer ? 1 : 0,
        .ppEnabledLayerNames = layer ? (const char *const[]){validation_layer} : NULL,
        .enabledExtensionCount = n_enable,
        .ppEnabledExtensionNames = enable,
    };
    VkInstance inst;
    VkResult r = vkCreateInstance(&ci, NULL, &inst);
    if (r != VK_SUCCESS)
        return vk_fail(r, "vkCreateInstance");
    *messenger = VK_NULL_HANDLE;
    if (layer) {
        PFN_vkCreateDebugUtilsMessengerEXT create =
            (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(inst, "vkCreateDebugUtilsMessengerEXT");
        r = create ? create(inst, &dbg, NULL, messenger) : VK_ERROR_EXTENSION_NOT_PRESENT;
        if (r != VK_SUCCESS) {
            vkDestroyInstance(inst, NULL);
            return vk_fail(r, "vkCreateDebugUtilsMessengerEXT");
        }
    }
    *validation_on = layer;
    *out = inst;
    return SEER_OK;
}

static void instance_destroy(VkInstance inst, VkDebugUtilsMessengerEXT messenger)
{
    if (messenger != VK_NULL_HANDLE) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(inst, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy)
            destroy(inst, messenger, NULL);
    }
    vkDestroyInstance(inst, NULL); /* accepts VK_NULL_HANDLE */
}

/* ---- probing one device ------------------------------------------------------------------ */

struct probe {
    VkPhysicalDevice pd;
    struct vk_device_info info;
    struct vk_caps caps;
    uint32_t queue_family;
    bool portability_subset; /* the device must get VK_KHR_portability_subset enabled */
};

static enum vk_device_kind kind_of(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return VK_KIND_DISCRETE;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return VK_KIND_INTEGRATED;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return VK_KIND_VIRTUAL;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return VK_KIND_CPU;
    default: return VK_KIND_OTHER;
    }
}

/* driverVersion is vendor-encoded: NVIDIA packs 10.8.8.6 bits; Intel on Windows 18.14; the rest
   (Mesa, AMD, ARM, Qualcomm…) use the VK_MAKE_VERSION layout. */
static void driver_version_str(uint32_t vendor, uint32_t v, char *s, size_t n)
{
    if (vendor == 0x10DE)
        snprintf(s, n, "%u.%u.%u.%u", v >> 22, (v >> 14) & 0xff, (v >> 6) & 0xff, v & 0x3f);
#ifdef _WIN32
    else if (vendor == 0x8086)
        snprintf(s, n, "%u.%u", v >> 14, v & 0x3fff);
#endif
    else
        snprintf(s, n, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

static int probe_device(VkPhysicalDevice pd, int index, struct probe *p)
{
    struct vk_device_info *info = &p->info;
    struct vk_caps *caps = &p->caps;
    memset(p, 0, sizeof *p);
    p->pd = pd;
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    info->index = index;
    snprintf(info->name, sizeof info->name, "%s", props.deviceName);
    info->kind = kind_of(props.deviceType);
    info->vendor_id = props.vendorID;
    info->device_id = props.deviceID;
    info->api_version = props.apiVersion;
    info->driver_version = props.driverVersion;
    driver_version_str(props.vendorID, props.driverVersion, info->driver_version_str, sizeof info->driver_version_str);
    const VkPhysicalDeviceLimits *lim = &props.limits;
    info->max_storage_range = lim->maxStorageBufferRange;
    memcpy(info->max_workgroup_size, lim->maxComputeWorkGroupSize, sizeof info->max_workgroup_size);
    info->max_workgroup_invocations = lim->maxComputeWorkGroupInvocations;
    info->shared_memory_bytes = lim->maxComputeSharedMemorySize;

    uint32_t n_ext = 0;
    VkExtensionProperties *ext = NULL;
    VkResult r = vkEnumerateDeviceExtensionProperties(pd, NULL, &n_ext, NULL);
    if (r == VK_SUCCESS && n_ext) {
        ext = seer_calloc(n_ext, sizeof *ext);
        if (!ext)
            return seer_err(SEER_ENOMEM, "vulkan: no memory for %u device extension names", n_ext);
        r = vkEnumerateDeviceExtensionProperties(pd, NULL, &n_ext, ext);
    }
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(ext);
        return vk_fail(r, "vkEnumerateDeviceExtensionProperties");
    }
    bool v11 = props.apiVersion >= VK_API_VERSION_1_1, v12 = props.apiVersion >= VK_API_VERSION_1_2,
         v13 = props.apiVersion >= VK_API_VERSION_1_3;
    caps->ext_float16_int8 = !v12 && has_ext(ext, n_ext, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    caps->ext_int_dot = !v13 && has_ext(ext, n_ext, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    caps->ext_memory_budget = v11 && has_ext(ext, n_ext, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    bool driver_props = v12 || has_ext(ext, n_ext, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
    p->portability_subset = has_ext(ext, n_ext, "VK_KHR_portability_subset");
    /* The feature struct arrived in headers 1.3.255; older headers can only see the extension. */
    info->coopmat = has_ext(ext, n_ext, "VK_KHR_cooperative_matrix");

    if (v11) {
        /* 1.1 core queries; structs of later versions are chained only when the device has them. */
        VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
        VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
                                                     .pNext = &sg};
        VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, .pNext = &m3};
        /* whether the device runs a packed 4×8-bit signed dot product faster than the multiplies
           it stands for (op_matmul.c takes the integer-dot matvec only then) */
        VkPhysicalDeviceShaderIntegerDotProductProperties idot_props = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES,
            .pNext = driver_props ? (void *)&drv : (void *)&m3};
        VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                          .pNext = driver_props ? (void *)&drv : (void *)&m3};
        if (v13 || caps->ext_int_dot)
            p2.pNext = &idot_props;
        vkGetPhysicalDeviceProperties2(pd, &p2);
        caps->int_dot_fast = idot_props.integerDotProduct4x8BitPackedSignedAccelerated;
        info->subgroup_size = sg.subgroupSize;
        info->subgroup_arith = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                               (sg.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT) &&
                               (sg.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
        info->max_allocation_bytes = m3.maxMemoryAllocationSize;
        if (driver_props) {
            snprintf(info->driver_name, sizeof info->driver_name, "%s", drv.driverName);
            snprintf(info->driver_info, sizeof info->driver_info, "%s", drv.driverInfo);
        }

        VkPhysicalDevice16BitStorageFeatures s16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
        VkPhysicalDeviceShaderFloat16Int8Features f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
        VkPhysicalDeviceShaderIntegerDotProductFeatures idot = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
        VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &s16};
        void **tail = &s16.pNext;
        if (v12 || caps->ext_float16_int8) {
            *tail = &f16;
            tail = &f16.pNext;
        }
        if (v13 || caps->ext_int_dot)
            *tail = &idot;
        vkGetPhysicalDeviceFeatures2(pd, &f2);
        info->storage16 = s16.storageBuffer16BitAccess;
        info->fp16 = f16.shaderFloat16;
        info->int_dot = idot.shaderIntegerDotProduct;
        caps->int_dot_fast = caps->int_dot_fast && info->int_dot;
    }
    free(ext);

    VkPhysicalDeviceMemoryProperties mem;
    vkGetPhysicalDeviceMemoryProperties(pd, &mem);
    info->n_heaps = MIN(mem.memoryHeapCount, (uint32_t)VK_INFO_MAX_HEAPS);
    for (uint32_t i = 0; i < info->n_heaps; i++) {
        info->heaps[i].size_bytes = mem.memoryHeaps[i].size;
        info->heaps[i].device_local = mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
    }

    uint32_t n_fam = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n_fam, NULL);
    VkQueueFamilyProperties *fam = n_fam ? seer_calloc(n_fam, sizeof *fam) : NULL;
    if (n_fam && !fam)
        return seer_err(SEER_ENOMEM, "vulkan: no memory for %u queue families", n_fam);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n_fam, fam);
    bool compute = false;
    for (uint32_t i = 0; i < n_fam && !compute; i++)
        if (fam[i].queueCount > 0 && (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) {
            p->queue_family = i;
            compute = true;
        }
    free(fam);
    info->usable = v11 && compute;

    caps->api_version = props.apiVersion;
    caps->vendor_id = props.vendorID;
    caps->device_id = props.deviceID;
    memcpy(caps->cache_uuid, props.pipelineCacheUUID, VK_UUID_SIZE);
    caps->kind = info->kind;
    caps->subgroup_size = info->subgroup_size;
    caps->subgroup_arith = info->subgroup_arith;
    /* whole words, so a window's range can be rounded up to a word without passing the limit */
    caps->max_storage_range = info->max_storage_range & ~(uint64_t)3;
    /* every binding is a 32-bit word array, so windows also start on whole words */
    caps->storage_align = (uint32_t)MAX(lim->minStorageBufferOffsetAlignment, (VkDeviceSize)4);
    caps->max_push_bytes = lim->maxPushConstantsSize;
    caps->max_wg_invocations = lim->maxComputeWorkGroupInvocations;
    memcpy(caps->max_wg_size, lim->maxComputeWorkGroupSize, sizeof caps->max_wg_size);
    memcpy(caps->max_wg_count, lim->maxComputeWorkGroupCount, sizeof caps->max_wg_count);
    caps->shared_bytes = lim->maxComputeSharedMemorySize;
    caps->max_alloc = info->max_allocation_bytes ? info->max_allocation_bytes : info->max_storage_range;
    caps->fp16 = info->fp16;
    caps->storage16 = info->storage16;
    caps->int_dot = info->int_dot;
    caps->coopmat = info->coopmat;
    return SEER_OK;
}

/* vkEnumeratePhysicalDevices, where the loader brings the drivers up. Mesa's lavapipe
   (mesa-vulkan-drivers 22.3.6-1+deb12u2, Debian 12's current package) allocates 128 bytes there,
   once, that it never frees; the loader unloads it before exit, so LeakSanitizer reports them from
   frames it cannot even name, and every sanitizer run that probed Vulkan failed on a fresh machine.
   Only the loader and drivers run inside this call, so a sanitizer build ignores what is allocated
   during it (__lsan_disable is per thread) — narrower than a suppression, which could only match
   the loader's frames through the slow unwinder, and that made lavapipe's shader compiles minutes
   long under ASan. */
static VkResult enumerate_devices(VkInstance inst, uint32_t *n, VkPhysicalDevice *pds)
{
#ifdef SEER_LSAN
    __lsan_disable();
#endif
    VkResult r = vkEnumeratePhysicalDevices(inst, n, pds);
#ifdef SEER_LSAN
    __lsan_enable();
#endif
    return r;
}

/* All physical devices of `inst`, probed. *out freed by the caller. */
static int probe_all(VkInstance inst, struct probe **out, int *n_out)
{
    uint32_t n = 0;
    *out = NULL;
    *n_out = 0;
    VkResult r = enumerate_devices(inst, &n, NULL);
    if (r != VK_SUCCESS)
        return vk_fail(r, "vkEnumeratePhysicalDevices");
    if (n == 0)
        return SEER_OK;
    VkPhysicalDevice *pds = seer_calloc(n, sizeof *pds);
    struct probe *p = seer_calloc(n, sizeof *p);
    if (!pds || !p) {
        free(pds);
        free(p);
        return seer_err(SEER_ENOMEM, "vulkan: no memory to list %u devices", n);
    }
    r = enumerate_devices(inst, &n, pds);
    int rc = (r == VK_SUCCESS || r == VK_INCOMPLETE) ? SEER_OK : vk_fail(r, "vkEnumeratePhysicalDevices");
    for (uint32_t i = 0; i < n && rc == SEER_OK; i++)
        rc = probe_device(pds[i], (int)i, &p[i]);
    free(pds);
    if (rc) {
        free(p);
        return rc;
    }
    *out = p;
    *n_out = (int)n;
    return SEER_OK;
}

/* ---- the device list and the auto choice ------------------------------------------------- */

const char *vk_device_kind_name(enum vk_device_kind k)
{
    static const char *const names[] = {"discrete", "integrated", "virtual", "cpu", "other"};
    return (unsigned)k < ARRAY_LEN(names) ? names[k] : "other";
}

struct vk_backend_params vk_backend_params_default(void)
{
    return (struct vk_backend_params){.device_index = -1};
}

int vk_device_list(struct vk_device_info **out, int *n, char *why, size_t why_size)
{
    VkInstance inst = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    bool validation_on = false;
    _Atomic uint64_t unused = 0;
    *out = NULL;
    *n = 0;
    if (why && why_size)
        why[0] = '\0';
    int rc = instance_create(false, &unused, &inst, &messenger, &validation_on);
    if (rc == SEER_EUNSUPPORTED || rc == SEER_EDEVICE) {
        /* No driver (VK_ERROR_INCOMPATIBLE_DRIVER) or an old loader: there are no devices. */
        if (why && why_size)
            snprintf(why, why_size, "%s", seer_last_error());
        return SEER_OK;
    }
    if (rc)
        return rc;
    struct probe *p;
    int np;
    rc = probe_all(inst, &p, &np);
    instance_destroy(inst, messenger);
    if (rc)
        return rc;
    if (np == 0) {
        if (why && why_size)
            snprintf(why, why_size, "the Vulkan loader found no physical device");
        return SEER_OK;
    }
    struct vk_device_info *list = seer_calloc((size_t)np, sizeof *list);
    if (!list) {
        free(p);
        return seer_err(SEER_ENOMEM, "vulkan: no memory to list %d devices", np);
    }
    for (int i = 0; i < np; i++)
        list[i] = p[i].info;
    free(p);
    *out = list;
    *n = np;
    return SEER_OK;
}

void vk_device_list_free(struct vk_device_info *list) { free(list); }

static int kind_rank(enum vk_device_kind k)
{
    switch (k) {
    case VK_KIND_DISCRETE: return 0;
    case VK_KIND_INTEGRATED: return 1;
    case VK_KIND_VIRTUAL: return 2;
    default: return 3; /* CPU (lavapipe, SwiftShader) and unknown kinds: last resort */
    }
}

static uint64_t local_heap(const struct vk_device_info *d)
{
    uint64_t best = 0;
    for (uint32_t i = 0; i < d->n_heaps; i++)
        if (d->heaps[i].device_local && d->heaps[i].size_bytes > best)
            best = d->heaps[i].size_bytes;
    return best;
}

int vk_device_pick_auto(const struct vk_device_info *list, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (!list[i].usable)
            continue;
        if (best < 0 || kind_rank(list[i].kind) < kind_rank(list[best].kind) ||
            (kind_rank(list[i].kind) == kind_rank(list[best].kind) && local_heap(&list[i]) > local_heap(&list[best])))
            best = i;
    }
    return best;
}

/* ---- opening the backend's device -------------------------------------------------------- */

static int device_create(struct vk_ctx *vk, const struct probe *p)
{
    const struct vk_caps *c = &vk->caps;
    bool v12 = c->api_version >= VK_API_VERSION_1_2, v13 = c->api_version >= VK_API_VERSION_1_3;
    /* Optional features are enabled where present so later fast-path kernels can use them; the
       plain kernels need none (F16/BF16 weights are read as 32-bit words). */
    VkPhysicalDevice16BitStorageFeatures s16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                                                .storageBuffer16BitAccess = c->storage16};
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
                                                     .shaderFloat16 = c->fp16};
    VkPhysicalDeviceShaderIntegerDotProductFeatures idot = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES,
        .shaderIntegerDotProduct = c->int_dot};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &s16};
    const char *exts[5];
    uint32_t n_exts = 0;
    void **tail = &s16.pNext;
    if (v12 || c->ext_float16_int8) {
        *tail = &f16;
        tail = &f16.pNext;
        if (!v12)
            exts[n_exts++] = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;
    }
    if (v13 || c->ext_int_dot) {
        *tail = &idot;
        if (!v13)
            exts[n_exts++] = VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME;
    }
    if (c->ext_memory_budget) /* lets the memory plan see what other processes use */
        exts[n_exts++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
    if (p->portability_subset) /* required by the spec when the device offers it */
        exts[n_exts++] = "VK_KHR_portability_subset";
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo q = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = p->queue_family,
        .queueCount = 1,
        .pQueuePriorities = &priority,
    };
    VkDeviceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &f2,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &q,
        .enabledExtensionCount = n_exts,
        .ppEnabledExtensionNames = exts,
    };
    VkResult r = vkCreateDevice(vk->phys, &ci, NULL, &vk->device);
    if (r != VK_SUCCESS) {
        vk->device = VK_NULL_HANDLE;
        return vk_fail(r, "vkCreateDevice");
    }
    vk->queue_family = p->queue_family;
    vkGetDeviceQueue(vk->device, p->queue_family, 0, &vk->queue);
    return SEER_OK;
}

int vk_device_open(struct vk_ctx *vk, const struct vk_backend_params *params)
{
    int rc = instance_create(params->enable_validation, &vk->validation_errors, &vk->instance, &vk->messenger,
                             &vk->validation_active);
    if (rc)
        return rc;
    struct probe *p;
    int n;
    rc = probe_all(vk->instance, &p, &n);
    if (rc)
        return rc;
    int idx;
    if (params->device_index >= 0) {
        idx = params->device_index < n ? params->device_index : -1;
        if (idx < 0)
            rc = seer_err(SEER_EUNSUPPORTED, "vulkan: device %d does not exist (%d device%s found)",
                          params->device_index, n, n == 1 ? "" : "s");
        else if (!p[idx].info.usable)
            rc = seer_err(SEER_EUNSUPPORTED, "vulkan: device %d (%s) is unusable: it needs Vulkan 1.1 and a compute queue",
                          idx, p[idx].info.name);
    } else {
        struct vk_device_info *infos = n ? seer_calloc((size_t)n, sizeof *infos) : NULL;
        if (n && !infos) {
            free(p);
            return seer_err(SEER_ENOMEM, "vulkan: no memory to list devices");
        }
        for (int i = 0; i < n; i++)
            infos[i] = p[i].info;
        idx = vk_device_pick_auto(infos, n);
        free(infos);
        if (idx < 0)
            rc = seer_err(SEER_EUNSUPPORTED, "vulkan: no usable device (%d found)", n);
    }
    if (rc == SEER_OK) {
        vk->phys = p[idx].pd;
        vk->info = p[idx].info;
        vk->caps = p[idx].caps;
        vkGetPhysicalDeviceMemoryProperties(vk->phys, &vk->mem);
        uint64_t ov = params->max_storage_range_override;
        if (ov) {
            /* a window must hold at least its alignment slack plus one word */
            if (ov < (uint64_t)vk->caps.storage_align + 4)
                rc = seer_err(SEER_EINVAL, "vulkan: max_storage_range_override %llu is below the minimum %u",
                              (unsigned long long)ov, vk->caps.storage_align + 4);
            else if (ov < vk->caps.max_storage_range)
                vk->caps.max_storage_range = ov & ~(uint64_t)3;
        }
    }
    if (rc == SEER_OK)
        rc = device_create(vk, &p[idx]);
    free(p);
    return rc;
}

void vk_device_close(struct vk_ctx *vk)
{
    vkDestroyDevice(vk->device, NULL); /* accepts VK_NULL_HANDLE */
    vk->device = VK_NULL_HANDLE;
    instance_destroy(vk->instance, vk->messenger);
    vk->instance = VK_NULL_HANDLE;
    vk->messenger = VK_NULL_HANDLE;
}
