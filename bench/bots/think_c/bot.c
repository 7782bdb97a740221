/*
 * think_c: an honest benchmark bot. For every request it computes until its own
 * thread has used argv[1] milliseconds of CPU time (default 10) since it read
 * the request, then answers with the empty Vendetta placement (always legal).
 * Between requests it sleeps in read(), using nothing.
 *
 * The work is counted in CPU time (CLOCK_THREAD_CPUTIME_ID), not wall time, so
 * every decision is the same amount of work however the machine is loaded: the
 * wall time the referee measures then shows what others took from it.
 *
 *   start   -> {"type":"ready","name":"think_c"}
 *   request -> {"type":"action","id":<id>,"action":{"type":"place","placements":[]}}
 *   others  -> nothing
 *
 * Build: gcc -O2 -std=c11 -o bot bot.c
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void send_all(const char *data, size_t size) {
    while (size > 0) {
        ssize_t done = write(1, data, size);
        if (done <= 0) exit(1);
        data += done;
        size -= (size_t)done;
    }
}

static long long thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
    double think_ms = argc > 1 ? atof(argv[1]) : 10.0;
    long long think_ns = (long long)(think_ms * 1e6);
    char *line = NULL;
    size_t capacity = 0;
    char out[256];
    volatile unsigned long work = 0;
    while (getline(&line, &capacity, stdin) > 0) {
        if (strstr(line, "\"type\":\"request\"") != NULL) {
            /* The clock starts after the line is read: parsing is part of no one's
               work here, and reading it took a few microseconds at most. */
            long long until = thread_cpu_ns() + think_ns;
            /* Reading the clock is a vDSO call, cheap next to 1000 additions: the
               overshoot past the target is a few microseconds. */
            while (thread_cpu_ns() < until) {
                for (int i = 0; i < 1000; i++) work += (unsigned long)i;
            }
            const char *id = strstr(line, "\"id\":");
            long value = id ? strtol(id + 5, NULL, 10) : 0;
            int size = snprintf(out, sizeof out,
                                "{\"type\":\"action\",\"id\":%ld,\"action\":{\"type\":\"place\",\"placements\":[]}}\n",
                                value);
            send_all(out, (size_t)size);
        } else if (strstr(line, "\"type\":\"start\"") != NULL) {
            static const char ready[] = "{\"type\":\"ready\",\"name\":\"think_c\"}\n";
            send_all(ready, sizeof ready - 1);
        }
    }
    free(line);
    return 0;
}
