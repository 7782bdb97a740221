/*
 * spin_c: a CPU-bound benchmark bot. For every request it keeps one core busy
 * (a tight loop on the monotonic clock) until a fraction of the request's own
 * allowance "time_ms" has passed since it read the request, then answers with
 * the empty Vendetta placement. The fraction is argv[1] (default 0.5).
 *
 * The spin is on wall time, not CPU time: on a loaded machine the bot still
 * answers at fraction * time_ms after reading, as a bot managing its clock would.
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

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double fraction = argc > 1 ? atof(argv[1]) : 0.5;
    char *line = NULL;
    size_t capacity = 0;
    char out[256];
    volatile unsigned long work = 0;
    while (getline(&line, &capacity, stdin) > 0) {
        double read_at = now_s();
        if (strstr(line, "\"type\":\"request\"") != NULL) {
            const char *id = strstr(line, "\"id\":");
            const char *limit = strstr(line, "\"time_ms\":");
            long value = id ? strtol(id + 5, NULL, 10) : 0;
            double until = read_at + (limit ? strtod(limit + 10, NULL) : 0.0) * fraction / 1000.0;
            while (now_s() < until) {
                for (int i = 0; i < 1000; i++) work += (unsigned long)i;
            }
            int size = snprintf(out, sizeof out,
                                "{\"type\":\"action\",\"id\":%ld,\"action\":{\"type\":\"place\",\"placements\":[]}}\n",
                                value);
            send_all(out, (size_t)size);
        } else if (strstr(line, "\"type\":\"start\"") != NULL) {
            static const char ready[] = "{\"type\":\"ready\",\"name\":\"spin_c\"}\n";
            send_all(ready, sizeof ready - 1);
        }
    }
    free(line);
    return 0;
}
