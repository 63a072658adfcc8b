/* Slow fsync for the fault tests: loaded into `uq serve` with LD_PRELOAD.
 *
 * While the file named by $UQ_SLOW_FSYNC exists, every fsync() and fdatasync() of the process
 * first sleeps 0.5 to 2 seconds (at random), then does the real thing: a disk turned slow,
 * with nothing else changed (the data still reaches the disk). Removing the file makes the disk
 * fast again at once. Built by tests/faults/conftest.py with the system's C compiler.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void wait_if_slow(void) {
    const char *flag = getenv("UQ_SLOW_FSYNC");
    if (flag == NULL || access(flag, F_OK) != 0) {
        return;
    }
    double seconds = 0.5 + 1.5 * ((double)random() / (double)RAND_MAX);
    struct timespec pause = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&pause, NULL);
}

int fsync(int fd) {
    static int (*real)(int);
    if (real == NULL) {
        real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    }
    wait_if_slow();
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (real == NULL) {
        real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    }
    wait_if_slow();
    return real(fd);
}
