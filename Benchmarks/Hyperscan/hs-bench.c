// Hyperscan on the message filter's bench corpus, for comparison only: never part of a product.
// Scripts/hyperscan-bench.sh builds it against Debian's libhyperscan-dev (5.4.0) and runs it
// beside `blocklist bench-workload sms-compiled` on the same rules and messages.
//
// Usage: hs-bench DIR MESSAGES
//   DIR holds patterns.tsv and messages.tsv, written by `blocklist bench-workload sms-corpus`:
//   a line per rule (precedence key, "c" when it ignores case, target s/b/a, pattern) and a
//   line per message (sender, tab, body, with a backslash, tab, line feed, carriage return or
//   NUL escaped as \\, \t, \n, \r, \0). Each target's patterns make one block-mode database
//   (UTF-8, one match per pattern); each message is scanned whole, sender
//   and body, and its decision is the lowest key of the patterns that match, as the filter's
//   precedence has it. Prints the workload report the bench reads: entries, seconds, and in
//   "bytes" the messages some rule decided, which must equal the filter's count. Then, as one
//   buffer: every body joined by line breaks, scanned once per round by the body patterns
//   reporting every match, "bufferBytes", "bufferSeconds" and "bufferMatches" (a rate of bytes;
//   no decision is drawn from it).

#include <hs/hs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { maxPatterns = 100000, maxMessages = 10000 };

struct database {
    const char *expressions[maxPatterns];
    unsigned flags[maxPatterns];
    unsigned ids[maxPatterns];
    unsigned count;
    hs_database_t *compiled;
    hs_scratch_t *scratch;
};

static uint32_t keys[maxPatterns];
static struct database sender, body, wholeBody;
static long bufferMatches;

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "hs-bench: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static char *readFile(const char *directory, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    FILE *file = fopen(path, "rb");
    if (!file) fail("cannot open", path);
    if (fseek(file, 0, SEEK_END) != 0) fail("cannot seek", path);
    long size = ftell(file);
    if (size < 0 || fseek(file, 0, SEEK_SET) != 0) fail("cannot size", path);
    char *bytes = malloc((size_t)size + 1);
    if (!bytes || fread(bytes, 1, (size_t)size, file) != (size_t)size) fail("cannot read", path);
    bytes[size] = 0;
    fclose(file);
    return bytes;
}

static void add(struct database *database, const char *expression, unsigned flags, unsigned id) {
    if (database->count == maxPatterns) fail("too many patterns", NULL);
    database->expressions[database->count] = expression;
    database->flags[database->count] = flags;
    database->ids[database->count] = id;
    database->count += 1;
}

static void compile(struct database *database, const char *name) {
    if (database->count == 0) return;
    hs_compile_error_t *error = NULL;
    if (hs_compile_multi(database->expressions, database->flags, database->ids, database->count, HS_MODE_BLOCK,
            NULL, &database->compiled, &error) != HS_SUCCESS) {
        fprintf(stderr, "hs-bench: the %s patterns do not compile: %s (pattern %d)\n", name, error->message,
            error->expression);
        exit(1);
    }
    if (hs_alloc_scratch(database->compiled, &database->scratch) != HS_SUCCESS) fail("no scratch for", name);
}

static int onMatch(unsigned id, unsigned long long from, unsigned long long to, unsigned flags, void *context) {
    (void)from;
    (void)to;
    (void)flags;
    uint32_t *best = context;
    if (keys[id] < *best) *best = keys[id];
    return 0;
}

// Reads the escapes of messages.tsv in place; returns the length of what they stand for.
static unsigned unescape(char *text) {
    char *out = text;
    for (const char *in = text; *in; in++) {
        if (*in != '\\') {
            *out++ = *in;
            continue;
        }
        in++;
        switch (*in) {
        case '\\': *out++ = '\\'; break;
        case 't': *out++ = '\t'; break;
        case 'n': *out++ = '\n'; break;
        case 'r': *out++ = '\r'; break;
        case '0': *out++ = 0; break;
        default: fail("messages.tsv holds an unknown escape", text);
        }
    }
    return (unsigned)(out - text);
}

static int onBufferMatch(unsigned id, unsigned long long from, unsigned long long to, unsigned flags, void *context) {
    (void)id;
    (void)from;
    (void)to;
    (void)flags;
    (void)context;
    bufferMatches += 1;
    return 0;
}

static uint32_t scan(struct database *database, const char *text, unsigned length) {
    uint32_t best = 0x7FFFFFFF;
    if (database->compiled
        && hs_scan(database->compiled, text, length, 0, database->scratch, onMatch, &best) != HS_SUCCESS) {
        fail("hs_scan failed", NULL);
    }
    return best;
}

int main(int argc, char **argv) {
    if (argc != 3) fail("usage: hs-bench DIR MESSAGES", NULL);
    long total = atol(argv[2]);
    char *patterns = readFile(argv[1], "patterns.tsv");
    unsigned id = 0;
    for (char *line = strtok(patterns, "\n"); line; line = strtok(NULL, "\n")) {
        char *key = line, *caseless = strchr(key, '\t');
        if (!caseless) fail("a patterns.tsv line has no fields", line);
        *caseless++ = 0;
        char *target = strchr(caseless, '\t');
        if (!target) fail("a patterns.tsv line has no target", line);
        *target++ = 0;
        char *expression = strchr(target, '\t');
        if (!expression) fail("a patterns.tsv line has no pattern", line);
        *expression++ = 0;
        keys[id] = (uint32_t)strtoul(key, NULL, 10);
        // No HS_FLAG_UCP: Hyperscan refuses \b with it. The corpus is ASCII, where ASCII and
        // Unicode \w, \d and \b agree, and the decided counts are compared to prove it.
        unsigned flags = HS_FLAG_SINGLEMATCH | HS_FLAG_UTF8 | (*caseless == 'c' ? HS_FLAG_CASELESS : 0);
        if (*target != 'b') add(&sender, expression, flags, id);
        if (*target != 's') {
            add(&body, expression, flags, id);
            add(&wholeBody, expression, flags & ~HS_FLAG_SINGLEMATCH, id);
        }
        id += 1;
    }
    compile(&sender, "sender");
    compile(&body, "body");
    compile(&wholeBody, "one-buffer body");

    static const char *senders[maxMessages], *bodies[maxMessages];
    static unsigned senderLengths[maxMessages], bodyLengths[maxMessages];
    unsigned count = 0;
    char *messages = readFile(argv[1], "messages.tsv");
    for (char *line = strtok(messages, "\n"); line && count < maxMessages; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t');
        if (!tab) fail("a messages.tsv line has no tab", line);
        *tab = 0;
        senders[count] = line;
        senderLengths[count] = unescape(line);
        bodies[count] = tab + 1;
        bodyLengths[count] = unescape(tab + 1);
        count += 1;
    }
    if (count == 0) fail("messages.tsv holds no message", NULL);

    long rounds = total / count > 0 ? total / count : 1;
    long decided = 0;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long round = 0; round < rounds; round++) {
        for (unsigned index = 0; index < count; index++) {
            uint32_t best = scan(&sender, senders[index], senderLengths[index]);
            uint32_t inBody = scan(&body, bodies[index], bodyLengths[index]);
            if (inBody < best) best = inBody;
            if (best != 0x7FFFFFFF) decided += 1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
    printf("entries %ld\nseconds %.6f\nbytes %ld\n", rounds * (long)count, seconds, decided);

    size_t bufferLength = 0;
    for (unsigned index = 0; index < count; index++) bufferLength += bodyLengths[index] + 1;
    char *buffer = malloc(bufferLength);
    if (!buffer) fail("no memory for one buffer", NULL);
    size_t at = 0;
    for (unsigned index = 0; index < count; index++) {
        memcpy(buffer + at, bodies[index], bodyLengths[index]);
        at += bodyLengths[index];
        buffer[at++] = '\n';
    }
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long round = 0; round < rounds; round++) {
        if (wholeBody.compiled
            && hs_scan(wholeBody.compiled, buffer, (unsigned)bufferLength, 0, wholeBody.scratch, onBufferMatch, NULL)
                != HS_SUCCESS) {
            fail("hs_scan failed on one buffer", NULL);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
    printf("bufferBytes %ld\nbufferSeconds %.6f\nbufferMatches %ld\n", rounds * (long)bufferLength, seconds,
        bufferMatches);
    free(buffer);
    return 0;
}
