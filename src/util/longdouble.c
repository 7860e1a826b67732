/* INCRBYFLOAT and HINCRBYFLOAT arithmetic in C's long double, the type
 * Redis computes them in. See longdouble.rs for why this is C.
 *
 * Values cross to Rust as 16 opaque bytes (LD_BYTES), copied in and out
 * with memcpy, so Rust never needs the type or its alignment. */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LD_BYTES 16
/* Redis's MAX_LONG_DOUBLE_CHARS: the longest input it parses, and room for
 * the longest %.17Lf text of a finite 80-bit long double (4,933 digits). */
#define LD_CHARS (5 * 1024)

_Static_assert(sizeof(long double) <= LD_BYTES, "long double fits the buffer");

static long double load(const unsigned char *bytes) {
    long double v;
    memcpy(&v, bytes, sizeof v);
    return v;
}

static void store(long double v, unsigned char *bytes) {
    memset(bytes, 0, LD_BYTES);
    memcpy(bytes, &v, sizeof v);
}

/* Redis's string2ld: strtold over the whole text, refusing leading space,
 * trailing garbage, overflow, underflow to zero and NaN. 1 if parsed. */
int ember_ld_parse(const char *text, size_t len, unsigned char *out) {
    char buf[LD_CHARS];
    char *end;
    long double v;
    if (len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, text, len);
    buf[len] = '\0';
    errno = 0;
    v = strtold(buf, &end);
    if (isspace((unsigned char)buf[0]) || end[0] != '\0' ||
        (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO)) ||
        errno == EINVAL || isnan(v))
        return 0;
    store(v, out);
    return 1;
}

/* a + b into out. */
void ember_ld_add(const unsigned char *a, const unsigned char *b, unsigned char *out) {
    store(load(a) + load(b), out);
}

/* 1 when neither NaN nor infinite. */
int ember_ld_is_finite(const unsigned char *v) {
    long double x = load(v);
    return !isnan(x) && !isinf(x);
}

/* Redis's ld2string in LD_STR_HUMAN mode for a finite value: %.17Lf, then
 * trailing zeros (and a bare point) trimmed, and "-0" made "0". Writes at
 * most cap bytes (no terminator); returns the length, or -1 if it does not
 * fit in cap. */
long ember_ld_format(const unsigned char *v, char *out, size_t cap) {
    char buf[LD_CHARS];
    int l = snprintf(buf, sizeof buf, "%.17Lf", load(v));
    if (l < 0 || (size_t)l + 1 > sizeof buf) return -1;
    if (strchr(buf, '.') != NULL) {
        char *p = buf + l - 1;
        while (*p == '0') {
            p--;
            l--;
        }
        if (*p == '.') l--;
    }
    if (l == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        l = 1;
    }
    if ((size_t)l > cap) return -1;
    memcpy(out, buf, (size_t)l);
    return l;
}

/* A timeout in seconds as Redis 7.0 turns it into milliseconds:
 * (long long) ceill(v * 1000). Where that is negative or does not fit a long
 * long (infinity, 1e16 s), x86's conversion gives LLONG_MIN and Redis says
 * "timeout is negative": -1 here. */
long long ember_ld_seconds_to_ms(const unsigned char *v) {
    long double ms = ceill(load(v) * 1000.0L);
    if (isnan(ms) || ms < 0 || ms >= 9223372036854775808.0L) return -1;
    return (long long)ms;
}
