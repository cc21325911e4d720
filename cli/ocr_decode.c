/* ocr_decode.c — the decoding thread of `seer ocr` (declared in cli/ocr.h): it opens each input in
   order and decodes the pages to do (seer_document_decode → 8-bit RGB) one page ahead of the device,
   handing them to the batch loop in cli/ocr.c through a one-slot queue. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli/ocr.h"
#include "cli/util.h"
#include "seer.h"

char *ocr_error_line(int rc)
{
    const char *m = cli_last_error();
    return strdup(m && *m ? m : seer_strerror(rc));
}

/* The thread decodes page k+1 only once page k has been taken, so the next page is ready when the
   device finishes the current one and at most two pages are in memory. Waits for an empty slot;
   false when the batch is stopping. */
static bool wait_empty(struct ocr_prefetch *pf)
{
    pthread_mutex_lock(&pf->mu);
    while (pf->full && !pf->quit)
        pthread_cond_wait(&pf->cv, &pf->mu);
    bool go = !pf->quit;
    pthread_mutex_unlock(&pf->mu);
    return go;
}

static void put(struct ocr_prefetch *pf, struct ocr_item *it)
{
    pthread_mutex_lock(&pf->mu);
    pf->slot = *it;
    pf->full = true;
    pthread_cond_broadcast(&pf->cv);
    pthread_mutex_unlock(&pf->mu);
}

static bool page_kept(const struct ocr_input *in, int page)
{
    for (size_t k = 0; k < in->n_kept; k++)
        if (in->kept[k].page == page)
            return true;
    return false;
}

static bool page_todo(const struct ocr_prefetch *pf, const struct ocr_input *in, int page)
{
    return ocr_pages_has(pf->pages, page) && !page_kept(in, page);
}

/* One input: a failed item, a "no page selected" item (page 0), or its pages to do. */
static void decode_input(struct ocr_prefetch *pf, size_t i)
{
    const struct ocr_input *in = &pf->list->v[i];
    struct ocr_item it = {.input = i, .page = 1, .last = true};
    seer_document *d = NULL;
    if (in->error)
        it.rc = SEER_EIO, it.error = strdup(in->error);
    else if ((it.rc = seer_document_open(in->path, pf->params, &d))) /* a video too: it has no pages */
        it.error = ocr_error_line(it.rc);
    if (it.rc) {
        put(pf, &it);
        return;
    }
    int n_pages = seer_document_pages(d), todo = 0;
    for (int p = 1; p <= n_pages; p++)
        todo += page_todo(pf, in, p);
    if (todo == 0) {
        it.page = 0;
        put(pf, &it);
    }
    for (int p = 1, k = 0; p <= n_pages && k < todo; p++) {
        if (!page_todo(pf, in, p))
            continue;
        if (k > 0 && !wait_empty(pf))
            break;
        it = (struct ocr_item){.input = i, .page = p, .n_pages = n_pages, .n_todo = todo, .last = ++k == todo};
        if ((it.rc = seer_document_decode(d, p - 1, &it.rgb, &it.width, &it.height)))
            it.error = ocr_error_line(it.rc);
        it.dpi = seer_document_dpi(d, p - 1);
        put(pf, &it);
    }
    seer_document_close(d);
}

static void *decode_thread(void *arg)
{
    struct ocr_prefetch *pf = arg;
    for (size_t i = 0; i < pf->list->n; i++)
        if (!pf->list->v[i].skip) {
            if (!wait_empty(pf))
                break;
            decode_input(pf, i);
        }
    pthread_mutex_lock(&pf->mu);
    pf->finished = true;
    pthread_cond_broadcast(&pf->cv);
    pthread_mutex_unlock(&pf->mu);
    return NULL;
}

bool ocr_prefetch_take(struct ocr_prefetch *pf, struct ocr_item *out)
{
    pthread_mutex_lock(&pf->mu);
    while (!pf->full && !pf->finished)
        pthread_cond_wait(&pf->cv, &pf->mu);
    bool got = pf->full;
    if (got) {
        *out = pf->slot;
        pf->full = false;
        pthread_cond_broadcast(&pf->cv);
    }
    pthread_mutex_unlock(&pf->mu);
    return got;
}

void ocr_item_clear(struct ocr_item *it)
{
    seer_free(it->rgb);
    it->rgb = NULL;
    free(it->error);
    it->error = NULL;
}

/* The thread starts with the interrupting signals blocked, so they always reach the main thread,
   which holds them back while it renames a finished file. */
int ocr_prefetch_start(struct ocr_prefetch *pf)
{
    sigset_t sigs, old;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT), sigaddset(&sigs, SIGTERM), sigaddset(&sigs, SIGHUP), sigaddset(&sigs, SIGPIPE);
    pthread_mutex_init(&pf->mu, NULL);
    pthread_cond_init(&pf->cv, NULL);
    pthread_sigmask(SIG_BLOCK, &sigs, &old);
    int e = pthread_create(&pf->thread, NULL, decode_thread, pf);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        pthread_mutex_destroy(&pf->mu);
        pthread_cond_destroy(&pf->cv);
        return cli_err(SEER_ENOMEM, "cannot start the decoding thread: %s", strerror(e));
    }
    return SEER_OK;
}

void ocr_prefetch_stop(struct ocr_prefetch *pf)
{
    pthread_mutex_lock(&pf->mu);
    pf->quit = true;
    pthread_cond_broadcast(&pf->cv);
    pthread_mutex_unlock(&pf->mu);
    pthread_join(pf->thread, NULL);
    if (pf->full)
        ocr_item_clear(&pf->slot);
    pthread_mutex_destroy(&pf->mu);
    pthread_cond_destroy(&pf->cv);
}
