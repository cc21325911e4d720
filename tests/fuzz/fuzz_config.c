/* fuzz_config.c — libFuzzer target: a config.json through the Qwen3.5 text and vision config
   readers, both from parsed JSON and from the file (the shared loader, core/jget.c), and the
   same bytes as a preprocessor_config.json. */
#include "fuzz_util.h"

#include "core/jget.h"
#include "lm/config.h"
#include "vision/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_quiet();
    const char *path = fz_file(0, data, size);
    struct qwen35_config qc;
    struct vit_config vc;
    fz_check_message(qwen35_config_from_hf_file(path, &qc));
    json_t *root = NULL;
    int rc = jget_load_file(path, (size_t)16 << 20, "fuzz", 0, &root);
    fz_check_message(rc);
    if (rc == SEER_OK) {
        fz_check_message(qwen35_config_from_json(root, path, &qc));
        int vrc = vit_config_from_json(root, path, &vc);
        fz_check_message(vrc);
        if (vrc == SEER_OK)
            fz_check_message(vit_config_read_preprocessor(&vc, path));
        json_decref(root);
    }
    return 0;
}
