/*
 * instant_c: a benchmark bot that answers every Vendetta request at once with
 * the empty placement (always legal). It does no work of its own, so a match
 * against it measures the referee.
 *
 *   start   -> {"type":"ready","name":"instant_c"}
 *   request -> {"type":"action","id":<id>,"action":{"type":"place","placements":[]}}
 *   others  -> nothing
 *
 * The request id is the first "id" member of the line (the referee writes
 * "type" then "id" first). Lines may be any length. Exits when stdin closes.
 *
 * Build: gcc -O2 -std=c11 -o bot bot.c
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void send_all(const char *data, size_t size) {
    while (size > 0) {
        ssize_t done = write(1, data, size);
        if (done <= 0) exit(1);
        data += done;
        size -= (size_t)done;
    }
}

int main(void) {
    char *line = NULL;
    size_t capacity = 0;
    char out[256];
    while (getline(&line, &capacity, stdin) > 0) {
        if (strstr(line, "\"type\":\"request\"") != NULL) {
            const char *id = strstr(line, "\"id\":");
            long value = id ? strtol(id + 5, NULL, 10) : 0;
            int size = snprintf(out, sizeof out,
                                "{\"type\":\"action\",\"id\":%ld,\"action\":{\"type\":\"place\",\"placements\":[]}}\n",
                                value);
            send_all(out, (size_t)size);
        } else if (strstr(line, "\"type\":\"start\"") != NULL) {
            static const char ready[] = "{\"type\":\"ready\",\"name\":\"instant_c\"}\n";
            send_all(ready, sizeof ready - 1);
        }
    }
    free(line);
    return 0;
}
