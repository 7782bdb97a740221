/*
 * c_bot: a famiglia sample bot in C, using nothing but libc.
 *
 * It reads the referee's JSON lines from stdin and answers on stdout:
 *   start                  -> {"type":"ready","name":"c_bot"}
 *   request with options   -> one of the options, copied unchanged (random pick)
 *   request without       -> a random legal Vendetta placement built from
 *   options (constraints)     constraints.hand, .max_districts and .minimum
 *   rejected, end, others  -> nothing (unknown message types are ignored)
 * When stdin closes it exits with status 0.
 *
 * The JSON "parser" is a small scanner: it walks the members of an object and
 * skips every value it does not need (nested objects, arrays, strings with
 * escapes), so unknown fields are harmless. Lines may be any length: the line
 * buffer grows as needed.
 *
 * The random generator is seeded from the match id and the seat in "start", so
 * a replayed match sees the same choices.
 *
 * Build: gcc -O2 -std=c11 -o bot bot.c
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOT_NAME "c_bot"
#define MAX_DISTRICTS_ON_BOARD 64

/* ---- random numbers: xorshift64*, seeded per match ------------------------ */

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static void rng_seed(uint64_t seed) { rng_state = seed ? seed : 0x9E3779B97F4A7C15ULL; }

static uint64_t rng_next(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

/* A uniform integer in [0, n); n > 0. The bias for small n is negligible. */
static long rng_below(long n) { return (long)(rng_next() % (uint64_t)n); }

/* ---- JSON scanning -------------------------------------------------------- */

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* p points at '"'; returns the position just after the closing quote (or at
 * the terminating NUL of a malformed line). */
static const char *skip_string(const char *p) {
    p++;
    while (*p && *p != '"') {
        if (*p == '\\' && p[1]) p++;
        p++;
    }
    return *p ? p + 1 : p;
}

/* Skips one JSON value starting at p (after whitespace); returns the position
 * just after it. Objects and arrays are skipped by counting brackets, without
 * recursion, so deep nesting cannot overflow the stack. */
static const char *skip_value(const char *p) {
    p = skip_ws(p);
    if (*p == '"') return skip_string(p);
    if (*p == '{' || *p == '[') {
        long depth = 0;
        while (*p) {
            if (*p == '"') {
                p = skip_string(p);
                continue;
            }
            if (*p == '{' || *p == '[') depth++;
            if (*p == '}' || *p == ']') {
                depth--;
                if (depth == 0) return p + 1;
            }
            p++;
        }
        return p;
    }
    /* number, true, false, null */
    while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' && *p != '\n' &&
           *p != '\r')
        p++;
    return p;
}

/* obj points at an object ('{'); returns a pointer to the value of member
 * `key`, or NULL. Only keys without escapes can match, which is all we need. */
static const char *find_member(const char *obj, const char *key) {
    size_t key_len = strlen(key);
    const char *p = skip_ws(obj);
    if (*p != '{') return NULL;
    p = skip_ws(p + 1);
    while (*p == '"') {
        const char *name = p + 1;
        const char *after = skip_string(p);
        size_t name_len = (size_t)(after - name) - 1;
        p = skip_ws(after);
        if (*p != ':') return NULL;
        p = skip_ws(p + 1);
        if (name_len == key_len && memcmp(name, key, key_len) == 0) return p;
        p = skip_ws(skip_value(p));
        if (*p != ',') return NULL;
        p = skip_ws(p + 1);
    }
    return NULL;
}

/* True if the value at p is the JSON string `text` (no escapes). */
static int string_equals(const char *p, const char *text) {
    size_t len = strlen(text);
    if (!p || *p != '"') return 0;
    return strncmp(p + 1, text, len) == 0 && p[1 + len] == '"';
}

static long member_long(const char *obj, const char *key, long fallback) {
    const char *p = obj ? find_member(obj, key) : NULL;
    if (!p || !(*p == '-' || (*p >= '0' && *p <= '9'))) return fallback;
    return strtol(p, NULL, 10);
}

/* Reads the array of integers at p into out[]; returns how many were read. */
static int read_int_array(const char *p, long *out, int capacity) {
    int n = 0;
    if (!p || *p != '[') return 0;
    p = skip_ws(p + 1);
    while (*p && *p != ']' && n < capacity) {
        char *end;
        long value = strtol(p, &end, 10);
        if (end == p) return n;
        out[n++] = value;
        p = skip_ws(end);
        if (*p == ',') p = skip_ws(p + 1);
    }
    return n;
}

/* ---- output --------------------------------------------------------------- */

static void send_line(const char *text) {
    fputs(text, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

static uint64_t hash_text(const char *p, const char *end, uint64_t h) {
    for (; p < end; p++) h = (h ^ (unsigned char)*p) * 0x100000001B3ULL; /* FNV-1a */
    return h;
}

static void on_start(const char *msg) {
    const char *match = find_member(msg, "match");
    uint64_t h = 0xCBF29CE484222325ULL;
    if (match) h = hash_text(match, skip_value(match), h);
    h ^= (uint64_t)member_long(msg, "seat", 0) * 0x9E3779B97F4A7C15ULL;
    rng_seed(h);
    send_line("{\"type\":\"ready\",\"name\":\"" BOT_NAME "\"}");
}

/* The element after the one at p in an array, or NULL at the end of the array
 * (or of a malformed one: every step must move forward, so this always ends). */
static const char *next_element(const char *p) {
    const char *end = skip_ws(skip_value(p));
    if (end == p || *end != ',') return NULL;
    end = skip_ws(end + 1);
    return (*end && *end != ']') ? end : NULL;
}

/* Answers with a uniformly chosen element of the non-empty options array. */
static void answer_option(long id, const char *options) {
    const char *first = skip_ws(options + 1);
    long count = 0;
    for (const char *p = first; p; p = next_element(p)) count++;
    long pick = rng_below(count);
    const char *p = first;
    for (long i = 0; i < pick; i++) p = next_element(p);
    const char *end = skip_value(p);
    printf("{\"type\":\"action\",\"id\":%ld,\"action\":%.*s}\n", id, (int)(end - p), p);
    fflush(stdout);
}

/* A random legal Vendetta placement: 0..max_districts distinct districts, each
 * at least its minimum, the total within the hand. */
static void answer_place(long id, const char *constraints) {
    long minimum[MAX_DISTRICTS_ON_BOARD];
    int districts = read_int_array(constraints ? find_member(constraints, "minimum") : NULL, minimum,
                                   MAX_DISTRICTS_ON_BOARD);
    long hand = member_long(constraints, "hand", 0);
    long max_districts = member_long(constraints, "max_districts", 0);
    int order[MAX_DISTRICTS_ON_BOARD];
    for (int i = 0; i < districts; i++) order[i] = i;
    for (int i = districts - 1; i > 0; i--) { /* Fisher-Yates */
        int j = (int)rng_below(i + 1);
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    long wanted = max_districts > 0 ? rng_below(max_districts + 1) : 0;
    long left = hand;
    int placed = 0;
    printf("{\"type\":\"action\",\"id\":%ld,\"action\":{\"type\":\"place\",\"placements\":[", id);
    for (int i = 0; i < districts && placed < wanted; i++) {
        long need = minimum[order[i]] < 1 ? 1 : minimum[order[i]];
        if (need > left) continue;
        /* At least the minimum, plus a random part of what is left over it. */
        long count = need + rng_below((left - need) / 2 + 1);
        printf("%s{\"district\":%d,\"count\":%ld}", placed ? "," : "", order[i] + 1, count);
        left -= count;
        placed++;
    }
    printf("]}}\n");
    fflush(stdout);
}

static void on_request(const char *msg) {
    long id = member_long(msg, "id", 0);
    const char *options = find_member(msg, "options");
    const char *first = options && *options == '[' ? skip_ws(options + 1) : NULL;
    if (first && *first && *first != ']') {
        answer_option(id, options);
        return;
    }
    answer_place(id, find_member(msg, "constraints"));
}

static void handle(const char *line) {
    const char *msg = skip_ws(line);
    if (*msg != '{') return; /* not an object: ignore */
    const char *type = find_member(msg, "type");
    if (string_equals(type, "start"))
        on_start(msg);
    else if (string_equals(type, "request"))
        on_request(msg);
    /* "rejected", "end" and unknown types need no answer. */
}

int main(void) {
    size_t capacity = 1 << 16;
    char *line = malloc(capacity);
    if (!line) return 1;
    for (;;) {
        /* Read one line of any length, growing the buffer as needed. */
        size_t len = 0;
        line[0] = '\0';
        while (fgets(line + len, capacity - len > INT_MAX ? INT_MAX : (int)(capacity - len), stdin)) {
            len += strlen(line + len);
            if (len > 0 && line[len - 1] == '\n') break;
            if (capacity - len < 2) {
                char *bigger = realloc(line, capacity * 2);
                if (!bigger) {
                    free(line);
                    return 1;
                }
                line = bigger;
                capacity *= 2;
            }
        }
        if (len == 0 && (feof(stdin) || ferror(stdin))) break;
        handle(line);
        if (feof(stdin) || ferror(stdin)) break;
    }
    free(line);
    return 0;
}
