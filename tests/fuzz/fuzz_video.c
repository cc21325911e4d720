/* fuzz_video.c — libFuzzer target for video/: the bytes are opened as a video from memory (a
   custom AVIOContext; nested opens refused), the demux pass runs, a small plan is made (at most 4
   frames, a 64 K pixel budget over the clip) and its frames are decoded, converted and resized.
   Frames are limited to 1 M pixels so a mutated header claiming a huge size is refused before
   libavcodec allocates it. Errors are expected; crashes, leaks, hangs and UB are findings.
   Seeds: small clips of any container (e.g. ffmpeg -f lavfi -i testsrc=size=32x32:duration=0.5
   seeds/a.mp4 / .mkv / .avi / .ts / .webm / .gif). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "video/video.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* one thread: findings replay deterministically */
    const struct video_limits lim = {.threads = 1, .max_pixels = 1 << 20};
    video_file *v = NULL;
    if (video_open_memory(data, size, "fuzz", &lim, &v) != 0)
        return 0;
    struct video_settings s = video_settings_default();
    s.max_frames = 4;
    s.min_frames = 1;
    s.min_pixels = 1024;
    s.max_pixels = 65536;
    struct video_plan p = {0};
    if (video_plan_make(video_file_info(v), "fuzz", &s, &p) == 0) {
        const size_t fb = (size_t)p.width * (size_t)p.height * 3;
        uint8_t *buf = malloc(fb);
        for (int64_t k = 0; buf && k < p.n_frames; k++) {
            if (video_read_frames(v, &p, k, 1, &buf) != 0)
                break;
            volatile uint8_t sink = buf[0] ^ buf[fb - 1]; /* a short buffer is an ASan finding */
            (void)sink;
        }
        free(buf);
    }
    video_plan_clear(&p);
    video_close(v);
    return 0;
}
