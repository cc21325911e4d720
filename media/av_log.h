/* av_log.h — FFmpeg's log, captured for seer's error messages and never printed. av_log has one
   process-wide callback, so everything in seer that calls FFmpeg (media/ for images, video/ for
   containers) must share this one: a second module installing its own would silently take the
   other's messages away. Each thread keeps its own last error-level line. */
#ifndef SEER_MEDIA_AV_LOG_H
#define SEER_MEDIA_AV_LOG_H

/* Installs the capturing callback (once; thread-safe) and clears this thread's last line. Call it
   before a series of FFmpeg calls whose errors you will report. */
void media_av_log_capture(void);
/* This thread's last line FFmpeg logged at AV_LOG_ERROR or worse since media_av_log_capture(),
   without its trailing newline; "" when none. */
const char *media_av_log_last(void);

#endif
