/* box.c — a grounding answer's box onto the page (ocr_map_box, ocr/scan.h; docs/OCR.md
   "Coordinates"): below both the scanner, which keeps an item's box only when it is usable, and the
   layout, whose pages hold the mapped boxes. */
#include <math.h>

#include "ocr/scan.h"

int ocr_map_box(const seer_ocr_geometry *geo, const double v[4], seer_box *out)
{
    double sx = 1000, sy = 1000; /* the model's units across the page */
    if (geo->coords == SEER_OCR_COORDS_MODEL_PIXELS) {
        sx = geo->model_width > 0 ? geo->model_width : geo->width;
        sy = geo->model_height > 0 ? geo->model_height : geo->height;
    }
    double x0 = fmin(v[0], v[2]), x1 = fmax(v[0], v[2]), y0 = fmin(v[1], v[3]), y1 = fmax(v[1], v[3]);
    if (isnan(v[0]) || isnan(v[1]) || isnan(v[2]) || isnan(v[3]))
        return 0;
    x0 = fmin(fmax(x0, 0), sx), x1 = fmin(fmax(x1, 0), sx);
    y0 = fmin(fmax(y0, 0), sy), y1 = fmin(fmax(y1, 0), sy);
    if (!(x0 < x1 && y0 < y1)) /* no area in the model's own units (a point, a box off the page) */
        return 0;
    /* Rounded outwards, so a box keeps every pixel it touches (a thin line on a small page still has
       one); the 1e-9 keeps an exact product such as 250 * 1000 / 1000 from gaining a pixel through
       rounding error, far below any real coordinate's precision. */
    double w = geo->width, h = geo->height;
    out->x0 = (int32_t)fmax(0, floor(x0 * w / sx + 1e-9));
    out->y0 = (int32_t)fmax(0, floor(y0 * h / sy + 1e-9));
    out->x1 = (int32_t)fmin(w, ceil(x1 * w / sx - 1e-9));
    out->y1 = (int32_t)fmin(h, ceil(y1 * h / sy - 1e-9));
    return out->x0 < out->x1 && out->y0 < out->y1;
}
