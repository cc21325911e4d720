/* fuzz_hub.c — libFuzzer target: the Hugging Face hub's model-metadata response (what
   GET /api/models/REPO/revision/main?blobs=true returns) through hub_parse_metadata (cli/hub.c),
   the one parser `seer pull` runs on bytes from the network before any file name or size from
   them reaches the disk. Every accepted file name must be a plain name and every size ≤ 1 TiB. */
#include "fuzz_util.h"

#include "cli/hub.h"
#include "cli/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_quiet();
    struct hub_manifest m = {0};
    int rc = hub_parse_metadata((const char *)data, size, "fuzz", &m);
    if (rc != SEER_OK && !*cli_last_error()) /* the command's own message (cli_err), consumed here */
        abort(); /* an error without a message breaks the one-line-error contract */
    uint64_t total = 0;
    for (size_t i = 0; rc == SEER_OK && i < m.n_files; i++) {
        const struct hub_file *f = &m.files[i];
        if (!f->name[0] || f->name[0] == '.' || strchr(f->name, '/') || f->size > ((uint64_t)1 << 40) ||
            (strlen(f->sha256) != 64 && strlen(f->git_sha1) != 40))
            abort(); /* the parser's contract (cli/hub.h) broken */
        total += f->size;
    }
    if (rc == SEER_OK && total != m.total_bytes)
        abort();
    hub_manifest_free(&m);
    return 0;
}
