/* Tests seer.h's "devices and model files" (api/device.c, api/info.c) and seer_fault_check through
   the public API: seer_device_list lists the CPU backend first and exactly one device `auto` picks,
   each Vulkan entry with a spec that loads and its memory the sum of its device-local heaps;
   seer_system_info is one fixed line; seer_model_file_info describes a tiny random Qwen3.5
   (gen_tiny.py, fresh seed) as an HF directory, a GGUF and an mmproj with the hyperparameters of
   its config.json and tensor bytes that add up, a memory plan on request, and refuses a missing or
   foreign file in one message naming it; seer_fault_check is clean for a mapped model and names
   the file once it has been truncated under the mapping. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seer.h"
#include "support/testutil.h"
#include "tap.h"

static void test_devices(void)
{
    seer_device_info *d = NULL;
    size_t n = 0;
    char note[256];
    int rc = seer_device_list(&d, &n, note, sizeof note);
    ok(rc == SEER_OK && d && n >= 1, "seer_device_list: %zu devices", n);
    if (!d)
        return;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    ok(d[0].type == SEER_DEVICE_CPU && !strcmp(d[0].spec, "cpu") && d[0].n_threads == (cores > 0 ? cores : 1) &&
           d[0].features == 0,
       "the CPU backend first, with one thread per online core (%d)", d[0].n_threads);
    int picked = 0, vulkan_usable = 0;
    for (size_t i = 0; i < n; i++) {
        picked += d[i].picked == SEER_DEVICE_PICKED_AUTO;
        if (i == 0)
            continue;
        uint64_t local = 0;
        for (int32_t h = 0; h < d[i].n_heaps; h++)
            local += d[i].heaps[h].device_local ? d[i].heaps[h].bytes : 0;
        char want[32];
        snprintf(want, sizeof want, "vulkan:%zu", i - 1);
        ok(!strcmp(d[i].spec, want) && d[i].type != SEER_DEVICE_CPU && d[i].name[0] && d[i].memory_bytes == local &&
               d[i].n_heaps >= 1 && d[i].n_heaps <= SEER_DEVICE_MAX_HEAPS && d[i].subgroup_size > 0,
           "%s (%s): spec, name, heaps adding up to its memory (%llu bytes)", d[i].spec, d[i].name,
           (unsigned long long)d[i].memory_bytes);
        vulkan_usable += (d[i].features & SEER_DEVICE_USABLE) != 0;
    }
    ok(picked == 1, "exactly one device is auto's choice (%d)", picked);
    ok(n > 1 ? (vulkan_usable ? note[0] == '\0' : strstr(note, "no usable") != NULL) : note[0] != '\0',
       "the note says why no Vulkan device is listed, and only then ('%s')", note);
    seer_free(d);
    ok(seer_device_list(&d, &n, NULL, 0) == SEER_OK && n >= 1, "the note may be NULL");
    seer_free(d);
}

static void test_system_info(void)
{
    const char *s = seer_system_info();
    ok(s && strstr(s, "int8 kernels = ") && strstr(s, "Vulkan = ") && !strchr(s, '\n') && seer_system_info() == s,
       "seer_system_info: one fixed line (%s)", s ? s : "NULL");
}

static json_t *info(const char *path, const char *device)
{
    char *text = NULL;
    int rc = seer_model_file_info(path, device, &text);
    json_t *j = rc == SEER_OK && text ? json_loads(text, 0, NULL) : NULL;
    if (!j)
        diag("%s: %d %s", path, rc, seer_last_error());
    seer_free(text);
    return j;
}

static json_int_t jint(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_is_integer(v) ? json_integer_value(v) : -999;
}

/* The dtypes' bytes and counts add up to the totals, and the tensors fit in the file(s). */
static bool totals_add_up(const json_t *j, uint64_t file_bytes)
{
    const char *k;
    json_t *v;
    json_int_t bytes = 0, count = 0;
    json_object_foreach(json_object_get(j, "dtypes"), k, v) {
        bytes += jint(v, "bytes", NULL);
        count += jint(v, "tensors", NULL);
    }
    return count > 0 && count == jint(j, "tensors", NULL) && bytes == jint(j, "total_bytes", NULL) &&
           (uint64_t)bytes <= file_bytes;
}

static uint64_t size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void test_file_info(const char *dir)
{
    char hf[700], cfg_path[760], st_path[760], gguf[700], mmproj[700];
    snprintf(hf, sizeof hf, "%s/hf", dir);
    snprintf(cfg_path, sizeof cfg_path, "%s/config.json", hf);
    snprintf(st_path, sizeof st_path, "%s/model.safetensors", hf);
    snprintf(gguf, sizeof gguf, "%s/model-f32.gguf", dir);
    snprintf(mmproj, sizeof mmproj, "%s/mmproj-f16.gguf", dir);
    json_t *cfg = json_load_file(cfg_path, 0, NULL);
    const json_t *tc = json_object_get(cfg, "text_config"), *vc = json_object_get(cfg, "vision_config");
    json_int_t hidden = jint(tc, "hidden_size", NULL), layers = jint(tc, "num_hidden_layers", NULL);
    json_int_t v_depth = jint(vc, "depth", NULL);
    ok(cfg && hidden > 0 && layers > 0 && v_depth > 0, "the tiny model's config.json read");

    json_t *j = info(hf, NULL);
    ok(j && !strcmp(json_string_value(json_object_get(j, "kind")), "hf model directory") &&
           jint(j, "text", "hidden_size") == hidden && jint(j, "text", "num_hidden_layers") == layers &&
           jint(j, "vision", "depth") == v_depth && !json_object_get(j, "plan") && totals_add_up(j, size_of(st_path)),
       "HF directory: its kind, config.json's hyperparameters, totals that add up, no plan unasked");
    json_decref(j);

    j = info(gguf, "cpu");
    const json_t *plan = json_object_get(j, "plan");
    ok(j && !strcmp(json_string_value(json_object_get(j, "kind")), "gguf text model") &&
           !strcmp(json_string_value(json_object_get(j, "architecture")), "qwen35") &&
           jint(j, "text", "hidden_size") == hidden && jint(j, "text", "num_hidden_layers") == layers &&
           totals_add_up(j, size_of(gguf)) && jint(plan, "weights_bytes", NULL) > 0 &&
           jint(plan, "total_bytes", NULL) >= jint(plan, "weights_bytes", NULL) &&
           json_is_boolean(json_object_get(plan, "fits")),
       "GGUF with device cpu: the same hyperparameters, and a plan of at least its weights");
    json_decref(j);

    j = info(mmproj, NULL);
    ok(j && strstr(json_string_value(json_object_get(j, "kind")), "mmproj") && jint(j, "vision", "depth") == v_depth &&
           !json_object_get(j, "text") && totals_add_up(j, size_of(mmproj)),
       "mmproj: the tower's depth, no text part");
    json_decref(j);
    json_decref(cfg);

    char missing[760], *text = (char *)"untouched";
    snprintf(missing, sizeof missing, "%s/no-such-model.gguf", dir);
    ok(seer_model_file_info(missing, NULL, &text) == SEER_EIO && text == NULL && strstr(seer_last_error(), missing),
       "a missing file: SEER_EIO naming it, *json NULL (%s)", seer_last_error());
    ok(seer_model_file_info(cfg_path, NULL, &text) != SEER_OK && text == NULL && strstr(seer_last_error(), "config.json"),
       "a file that is no model: an error naming it (%s)", seer_last_error());
}

static void test_fault_check(const char *dir)
{
    char src[700], copy[760], cmd[1600];
    snprintf(src, sizeof src, "%s/model-f32.gguf", dir);
    snprintf(copy, sizeof copy, "%s/mapped.gguf", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, copy);
    if (!ok(system(cmd) == 0, "a copy of the model to truncate"))
        return;
    seer_model_params mp = seer_model_params_default();
    mp.device = "cpu";
    mp.n_threads = 2;
    mp.weights = "map"; /* read in place: the mapping stays while the model lives */
    seer_model *m = NULL;
    int rc = seer_model_load(copy, &mp, &m);
    if (rc)
        diag("%s", seer_last_error());
    ok(rc == SEER_OK && seer_fault_check() == SEER_OK, "a model read in place: seer_fault_check is clean");
    if (!m)
        return;
    ok(truncate(copy, (off_t)(size_of(copy) / 2)) == 0 && seer_fault_check() == SEER_EIO &&
           strstr(seer_last_error(), copy) && strstr(seer_last_error(), "changed size"),
       "truncated under the mapping: SEER_EIO naming the file (%s)", seer_last_error());
    seer_model_free(m);
    ok(seer_fault_check() == SEER_OK, "freed: nothing left to check");
}

int main(void)
{
    plan_no_plan();
    uint64_t seed = test_seed();
    seer_set_log_level(SEER_LOG_ERROR);
    test_devices();
    test_system_info();
    char dir[600], cmd[1400];
    snprintf(dir, sizeof dir, "%s", test_tmp_dir());
    if (system("python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
        skip("python3 with numpy is needed to make the tiny model (scripts/install-deps.sh)", "model files");
        return done_testing();
    }
    snprintf(cmd, sizeof cmd, "python3 %s --out %s --preset tiny --seed %llu >/dev/null",
             test_src_path("tests/reference/gen_tiny.py"), dir, (unsigned long long)(seed % 1000000));
    if (!ok(system(cmd) == 0, "tiny model generated"))
        return done_testing();
    test_file_info(dir);
    test_fault_check(dir);
    return done_testing();
}
