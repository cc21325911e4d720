/* faults.c — what the seer command does when the machine rather than the input fails
   (docs/RELIABILITY.md): a model file that shrinks while it is mapped (SIGBUS, reported with the
   file and both sizes, exit 1), a reader that closes the pipe (SIGPIPE's default: a quiet end,
   status 141 in the shell), and an answer that could not be written or was computed from a file
   that changed meanwhile (exit 1, never a success). The library installs no signal handlers; it
   only keeps the table of mapped files this handler asks (seer_fault_describe) and checks them
   after the output (seer_fault_check). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "seer.h"

/* A weight page of a truncated model file faulted, maybe in a worker thread: nothing can be
   recovered (the pages are gone), so say which file and exit. A bus error outside any mapped
   file is a bug: one line, then the default action (a core dump) as if we were not here. */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    /* Worker threads reading the same lost pages fault together: one line, from the first. */
    static atomic_flag taken = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&taken))
        for (;;)
            pause(); /* until the first one's _exit ends the process */
    static const char pre[] = "seer: ";
    char line[1200];
    memcpy(line, pre, sizeof pre - 1);
    size_t n = seer_fault_describe(si->si_addr, line + sizeof pre - 1, sizeof line - (sizeof pre - 1));
    if (n) {
        ssize_t w = write(STDERR_FILENO, line, sizeof pre - 1 + n);
        (void)w;
        _exit(CLI_FAIL);
    }
    static const char bug[] = "seer: bus error outside any mapped model or input file\n";
    ssize_t w = write(STDERR_FILENO, bug, sizeof bug - 1);
    (void)w;
    signal(sig, SIG_DFL); /* the faulting access runs again and ends the process */
}

void cli_faults_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
    /* A closed pipe ends the command quietly, whatever the parent left ignored: otherwise every
       later write would fail unseen and the run would end "successfully" with nothing delivered. */
    signal(SIGPIPE, SIG_DFL);
}

static int stdout_errno; /* the first failed write to stdout: its errno, -1 unknown; 0 while all went out */

void cli_stdout_failed(int e)
{
    if (!stdout_errno)
        stdout_errno = e ? e : -1;
}

int cli_faults_after_output(void)
{
    int rc = seer_fault_check();
    if (rc)
        return cli_fail(rc);
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) /* a full disk, a closed descriptor */
        cli_stdout_failed(errno);
    if (stdout_errno) {
        fprintf(stderr, "seer: could not write the output to stdout: %s\n",
                stdout_errno > 0 ? strerror(stdout_errno) : "a write failed");
        return CLI_FAIL;
    }
    return CLI_OK;
}
