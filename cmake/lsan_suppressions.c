/* lsan_suppressions.c — LeakSanitizer's suppressions, compiled into every sanitizer build
   (SEER_SANITIZE, SEER_FUZZ: the library, so every program linking it — the command, the tests,
   the fuzzers — carries them, whatever the environment). LSan calls this hook by name at exit.
   Each entry is a leak inside a system library that seer cannot free, matched by that library's
   frames only, so a leak of seer's own still fails:

   - libfontconfig.so: poppler looks fonts up through fontconfig and keeps the result in its
     process-wide GlobalParams, which poppler-glib never frees (it has no shutdown call). A
     one-time cache: decoding more pages adds nothing.
   - libvulkan.so.1: Mesa's lavapipe (mesa-vulkan-drivers 22.3.6-1+deb12u2, Debian 12's current
     package) leaks 128 bytes while vkEnumeratePhysicalDevices loads it through the loader; the
     driver is unloaded before exit, so its own frames show as <unknown module> and only the
     loader's name is there to match. Every `--device auto` probe hit it, which failed the
     sanitizer runs of the command's tests on a fresh machine.

   The loader's frames are found only by the slow unwinder: the driver is built without frame
   pointers, so the fast one stops at the first driver frame and nothing is left to match. Hence
   fast_unwind_on_malloc=0 (the suite's sanitizer runs take about a quarter longer). The fuzzers
   (SEER_FUZZ) never load a Vulkan driver and keep the fast unwinder for their speed. An
   ASAN_OPTIONS in the environment still overrides it. A matched suppression is not reported
   (print_suppressions=0): the tests hold the command to one stderr line on a bad file. */
const char *__lsan_default_options(void);
__attribute__((visibility("default"))) const char *__lsan_default_options(void) { return "print_suppressions=0"; }

const char *__lsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
    return "leak:libfontconfig.so\n"
           "leak:libvulkan.so.1\n";
}

#ifndef SEER_FUZZ
const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__asan_default_options(void)
{
    return "fast_unwind_on_malloc=0";
}
#endif
