/* lsan_suppressions.c — LeakSanitizer's suppressions, compiled into every sanitizer build
   (SEER_SANITIZE, SEER_FUZZ: the library, so every program linking it — the command, the tests,
   the fuzzers — carries them, whatever the environment). LSan calls this hook by name at exit.
   Each entry is a leak inside a system library that seer cannot free, matched by that library's
   frames only, so a leak of seer's own still fails:

   - libfontconfig.so: poppler looks fonts up through fontconfig and keeps the result in its
     process-wide GlobalParams, which poppler-glib never frees (it has no shutdown call). A
     one-time cache: decoding more pages adds nothing.
   (lavapipe's one-time leak while the Vulkan loader brings it up is not suppressed here: its frames
   cannot be matched with the fast unwinder, so vulkan/device.c ignores allocations inside that one
   call instead.) A matched suppression is not reported (print_suppressions=0): the tests hold the
   command to one stderr line on a bad file. */
const char *__lsan_default_options(void);
__attribute__((visibility("default"))) const char *__lsan_default_options(void) { return "print_suppressions=0"; }

const char *__lsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
    return "leak:libfontconfig.so\n";
}

