/*
 * echo_c: the far end of the bare pipe baseline. For every line it reads it
 * writes back one line of N bytes plus "\n", where N is the decimal number the
 * incoming line starts with (the rest of the line is padding). The benchmark
 * sends lines the size of the referee's requests and asks for answers the size
 * of the bots' actions. Exits when stdin closes.
 *
 * Build: gcc -O2 -std=c11 -o bot bot.c
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    char *line = NULL;
    size_t capacity = 0;
    char *out = NULL;
    size_t out_capacity = 0;
    while (getline(&line, &capacity, stdin) > 0) {
        long size = strtol(line, NULL, 10);
        if (size < 0) size = 0;
        if ((size_t)size + 1 > out_capacity) {
            out_capacity = (size_t)size + 1;
            out = realloc(out, out_capacity);
            if (out == NULL) return 1;
        }
        memset(out, 'x', (size_t)size);
        out[size] = '\n';
        const char *data = out;
        size_t left = (size_t)size + 1;
        while (left > 0) {
            ssize_t done = write(1, data, left);
            if (done <= 0) return 1;
            data += done;
            left -= (size_t)done;
        }
    }
    free(line);
    free(out);
    return 0;
}
