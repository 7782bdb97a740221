/*
 * spinner_c: a seat that plays fast and takes the CPU from the others. It
 * answers every request at once with the empty Vendetta placement (always
 * legal); at its first request it first starts argv[1] processes (default 32;
 * 0 starts none: the same seat, quiet), each in a session of its own (setsid),
 * which spin until the bot is gone. So it computes on the other seats' time,
 * with more processes than the machine has cores, out of its own process group.
 *
 * The spinners close their copies of stdin and stdout: they compete for the CPU
 * and for nothing else, so the bot's end of input still ends the game's bot.
 * Each asks for SIGKILL when its parent (the bot) dies: with no sandbox
 * (level "none") nothing else kills processes that left the bot's session, and
 * a benchmark must not leave them behind. The sandbox levels kill them anyway
 * (the bot's PID namespace and control group go with it).
 *
 * A fork that fails (a process limit) ends the starting: the bot plays on with
 * the spinners it has, and says how many on stderr.
 *
 * Build: gcc -O2 -std=c11 -o bot bot.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static void send_all(const char *data, size_t size) {
    while (size > 0) {
        ssize_t done = write(1, data, size);
        if (done <= 0) exit(1);
        data += done;
        size -= (size_t)done;
    }
}

static void spin(pid_t parent) {
    setsid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* The bot may have died between fork and prctl: then no signal will come. */
    if (getppid() != parent) _exit(0);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        if (null > 1) close(null);
    }
    volatile unsigned long work = 0;
    for (;;) work++;
}

static long start_spinners(long wanted) {
    pid_t self = getpid();
    long started = 0;
    while (started < wanted) {
        pid_t child = fork();
        if (child < 0) break;
        if (child == 0) spin(self);
        started++;
    }
    return started;
}

int main(int argc, char **argv) {
    long wanted = argc > 1 ? strtol(argv[1], NULL, 10) : 32;
    int started = 0;
    char *line = NULL;
    size_t capacity = 0;
    char out[256];
    while (getline(&line, &capacity, stdin) > 0) {
        if (strstr(line, "\"type\":\"request\"") != NULL) {
            if (!started) {
                started = 1;
                long count = start_spinners(wanted);
                if (count < wanted) fprintf(stderr, "spinner_c: started %ld of %ld spinners\n", count, wanted);
            }
            const char *id = strstr(line, "\"id\":");
            long value = id ? strtol(id + 5, NULL, 10) : 0;
            int size = snprintf(out, sizeof out,
                                "{\"type\":\"action\",\"id\":%ld,\"action\":{\"type\":\"place\",\"placements\":[]}}\n",
                                value);
            send_all(out, (size_t)size);
        } else if (strstr(line, "\"type\":\"start\"") != NULL) {
            static const char ready[] = "{\"type\":\"ready\",\"name\":\"spinner_c\"}\n";
            send_all(ready, sizeof ready - 1);
        }
    }
    free(line);
    return 0;
}
