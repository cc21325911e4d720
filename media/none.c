/* media/none.c — a build without FFmpeg (SEER_FFMPEG=OFF): the decoders that need FFmpeg,
   libjpeg-turbo or libtiff refuse with one line naming the input, so that the library, the command
   and the tests still link and everything that decodes no image or video (text, seer bench's random
   models and pixels, the GPU check's bundle: scripts/gpu-bundle.sh) works. decode.c, image.c,
   density.c, pdf.c and video/plan.c need no library and are built either way. */
#if !defined(SEER_HAVE_FFMPEG)
#include <string.h>

#include "core/error.h"
#include "media/media_impl.h"
#include "video/video.h"

static int no_ffmpeg(const char *name)
{
    return seer_err(SEER_EUNSUPPORTED, "%s: this seer was built without FFmpeg (SEER_FFMPEG=OFF), so it decodes "
                    "no images or videos; rebuild with FFmpeg and libjpeg-turbo", name);
}

int media_jpeg_decode(media_doc *d, struct image_rgb8 *out)
{
    (void)out;
    return no_ffmpeg(d->name);
}

int media_av_decode(media_doc *d, struct image_rgb8 *out)
{
    (void)out;
    return no_ffmpeg(d->name);
}

int media_tiff_count(media_doc *d, int *n_pages)
{
    (void)n_pages;
    return no_ffmpeg(d->name);
}

int media_tiff_decode(media_doc *d, int page, struct image_rgb8 *out)
{
    (void)page, (void)out;
    return no_ffmpeg(d->name);
}

double media_tiff_dpi(media_doc *d, int page)
{
    (void)d, (void)page;
    return 0;
}

void media_tiff_close(media_doc *d) { (void)d; }

/* video_open never succeeds here, so no video_file exists for the others to be given */
int video_open(const char *path, const struct video_limits *lim, video_file **out)
{
    (void)lim, (void)out;
    return no_ffmpeg(path);
}

int video_open_memory(const void *buf, size_t n, const char *name, const struct video_limits *lim, video_file **out)
{
    (void)buf, (void)n, (void)lim, (void)out;
    return no_ffmpeg(name);
}

const struct video_info *video_file_info(const video_file *v)
{
    (void)v;
    return NULL;
}

const char *video_file_name(const video_file *v)
{
    (void)v;
    return NULL;
}

void video_close(video_file *v) { (void)v; }

int video_read_frames(video_file *v, const struct video_plan *p, int64_t first, int64_t count, uint8_t **rgb)
{
    (void)v, (void)p, (void)first, (void)count, (void)rgb;
    return seer_err(SEER_EUNSUPPORTED, "video: this seer was built without FFmpeg (SEER_FFMPEG=OFF)");
}

struct video_stats video_file_stats(const video_file *v)
{
    (void)v;
    struct video_stats s;
    memset(&s, 0, sizeof s);
    return s;
}
#endif
