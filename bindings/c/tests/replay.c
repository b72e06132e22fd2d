/* Feed a recorded RTL event stream (JSON Lines, docs/cosim.md) through the C ABI, one
 * event at a time as an RTL testbench's monitors would, and print what the checker found.
 * Compiled and run by tests/abi.rs (gcc):
 *   replay SCENARIO EVENTS.jsonl [inferred]
 * With `inferred`, the checker infers the decisions and the stream's `admit` and `drop`
 * lines are skipped, as for a DUT that exports no decision.
 * Exit: 0 consistent, 1 divergences (the first printed), 2 bad input or usage.
 * A small reader of the flat events the RTL testbench writes (cosim/tb/events.py): each
 * key occurs once per line; `meta` and `counters` lines are skipped (the C ABI carries the
 * events the monitors see); an `arrive` or `depart` with `crc` goes through the `_crc` call. */
#include "mmu_model.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number after "key": on the line (0 if absent). */
static unsigned long long num(const char *line, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    return p ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

/* The string after "key":" on the line, into out. */
static void str(const char *line, const char *key, char *out, size_t len) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(line, pat);
    size_t n = 0;
    if (p) {
        p += strlen(pat);
        while (p[n] && p[n] != '"' && n + 1 < len) {
            out[n] = p[n];
            n++;
        }
    }
    out[n] = 0;
}

int main(int argc, char **argv) {
    int inferred = argc == 4 && !strcmp(argv[3], "inferred");
    if (argc != 3 && !inferred) {
        fprintf(stderr, "usage: replay SCENARIO EVENTS.jsonl [inferred]\n");
        return 2;
    }
    char err[512];
    MmuChecker *h = mmu_new_decisions(argv[1], MMU_MODE_FOLLOW, MMU_LINE_RATE_CELL_PER_CYCLE, 2,
                                      inferred ? MMU_DECISIONS_INFERRED : MMU_DECISIONS_REPORTED);
    if (!h) {
        mmu_last_error(err, sizeof err);
        fprintf(stderr, "mmu_new: %s\n", err);
        return 2;
    }
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        perror(argv[2]);
        mmu_free(h);
        return 2;
    }
    static char line[1 << 16];
    char kind[32], text[64];
    unsigned long events = 0;
    int rc = 0;
    while (rc >= 0 && fgets(line, sizeof line, f)) {
        str(line, "event", kind, sizeof kind);
        unsigned long long c = num(line, "cycle");
        if (inferred && (!strcmp(kind, "admit") || !strcmp(kind, "drop"))) {
            continue;
        }
        int crc = strstr(line, "\"crc\":") != NULL;
        if (!strcmp(kind, "arrive") && crc) {
            rc = mmu_arrive_crc(h, c, num(line, "port"), num(line, "prio"), num(line, "flow"),
                                num(line, "seq"), num(line, "bytes"), num(line, "dst"),
                                num(line, "ncells"), num(line, "crc"));
        } else if (!strcmp(kind, "arrive")) {
            rc = mmu_arrive(h, c, num(line, "port"), num(line, "prio"), num(line, "flow"),
                            num(line, "seq"), num(line, "bytes"), num(line, "dst"),
                            num(line, "ncells"));
        } else if (!strcmp(kind, "admit")) {
            rc = mmu_admit(h, c, num(line, "port"), num(line, "flow"), num(line, "seq"),
                           num(line, "private"), num(line, "shared"), num(line, "headroom"));
        } else if (!strcmp(kind, "drop")) {
            str(line, "reason", text, sizeof text);
            rc = mmu_drop(h, c, num(line, "port"), num(line, "flow"), num(line, "seq"), text);
        } else if (!strcmp(kind, "depart") && crc) {
            rc = mmu_depart_crc(h, c, num(line, "port"), num(line, "queue"), num(line, "flow"),
                                num(line, "seq"), num(line, "src"), num(line, "ncells"),
                                num(line, "crc"));
        } else if (!strcmp(kind, "depart")) {
            rc = mmu_depart(h, c, num(line, "port"), num(line, "queue"), num(line, "flow"),
                            num(line, "seq"), num(line, "src"), num(line, "ncells"));
        } else if (!strcmp(kind, "pfc")) {
            str(line, "dir", text, sizeof text);
            rc = mmu_pfc(h, c, num(line, "port"), num(line, "class"),
                         strstr(line, "\"pause\":true") != NULL,
                         strcmp(text, "sent") ? MMU_PFC_RECEIVED : MMU_PFC_SENT);
        } else {
            continue;
        }
        events++;
    }
    fclose(f);
    if (rc >= 0)
        rc = mmu_finish(h);
    if (rc < 0) {
        mmu_last_error(err, sizeof err);
        fprintf(stderr, "event %lu refused (%d): %s\n", events, rc, err);
        mmu_free(h);
        return 2;
    }
    unsigned n = mmu_errors(h);
    printf("%lu events, %u divergences\n", events, n);
    if (n > 0) {
        int len = mmu_error_message(h, 0, NULL, 0);
        char *msg = malloc((size_t)len + 1);
        mmu_error_message(h, 0, msg, (uint32_t)len + 1);
        printf("first: cycle %llu, %s\n%s\n", (unsigned long long)mmu_error_cycle(h, 0),
               mmu_error_check(h, 0), msg);
        free(msg);
    }
    mmu_free(h);
    return n > 0;
}
