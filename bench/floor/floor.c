/* floor: the plain libvips floor of a thumbd cold miss, for bench/run.sh.
 *
 * What any service built on libvips must at least spend per thumbnail: one
 * vips_thumbnail_buffer (decode with shrink-on-load, resize, never upscale) and one
 * vips_jpegsave_buffer at Q80 (thumbd's default quality), on N threads, sources already in
 * memory. No HTTP, no fetch, no cache, no header check, no colour handling beyond what
 * vips_thumbnail does itself.
 *
 *   floor --corpus DIR [--threads N] [--seconds S] [--count N]
 * (--count: the first N requests only, whatever the time: for instruction counts under callgrind)
 *
 * DIR/manifest.tsv (bench/corpus.sh) names the images, in the order bench/lua/misses.lua
 * cycles through them. Request k (a counter shared by all threads) takes image k mod count at
 * width 200 + k mod 200, like misses.lua's "cold" mode. Prints one JSON line on stdout, the
 * fields of `thumbd-bench inprocess` (bench/report.py reads either). Exit status 1 when any
 * request failed (each failure is counted and reported on stderr, never skipped), 2 on a usage
 * or set-up error.
 *
 * Build: gcc -O2 -o floor floor.c $(pkg-config --cflags --libs vips) -pthread
 */
#include <vips/vips.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char *name;
    void *data;
    size_t len;
    atomic_long failures;
    atomic_flag reported; /* the first failure's libvips message is printed, once per image */
} Image;

static Image *images;
static long image_count;
static atomic_long next_k;    /* request number k, shared by all threads */
static atomic_long done;      /* requests that produced a JPEG */
static atomic_long failed;    /* requests that did not */
static double deadline;
static long max_requests = -1; /* --count: stop after this many requests (for callgrind) */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static void die(const char *message) {
    fprintf(stderr, "floor: %s\n", message);
    exit(2);
}

static void fail(Image *image, long k, int width, const char *step) {
    atomic_fetch_add(&failed, 1);
    atomic_fetch_add(&image->failures, 1);
    /* vips_error_buffer is global (shared by the threads): good enough for a diagnostic */
    if (!atomic_flag_test_and_set(&image->reported))
        fprintf(stderr, "floor: %s failed for %s (k=%ld, w=%d): %s\n", step, image->name, k, width,
                vips_error_buffer());
    vips_error_clear();
}

static void *worker(void *unused) {
    (void)unused;
    while (now() < deadline) {
        long k = atomic_fetch_add(&next_k, 1);
        if (max_requests >= 0 && k >= max_requests) break;
        Image *image = &images[k % image_count];
        int width = 200 + (int)(k % 200);
        VipsImage *thumb = NULL;
        void *jpeg = NULL;
        size_t jpeg_len = 0;
        /* height 10000000 (VIPS_MAX_COORD): only the width bounds the box, as thumbd's w-only
         * requests; size down: never upscale. The image is lazy: pixels are decoded in the save. */
        if (vips_thumbnail_buffer(image->data, image->len, &thumb, width, "height", 10000000, "size",
                                  VIPS_SIZE_DOWN, NULL)) {
            fail(image, k, width, "vips_thumbnail_buffer");
            continue;
        }
        if (vips_jpegsave_buffer(thumb, &jpeg, &jpeg_len, "Q", 80, "strip", TRUE, NULL) || jpeg_len == 0) {
            fail(image, k, width, "vips_jpegsave_buffer");
            g_free(jpeg);
            g_object_unref(thumb);
            continue;
        }
        g_free(jpeg);
        g_object_unref(thumb);
        atomic_fetch_add(&done, 1);
    }
    return NULL;
}

/* Reads a whole file into memory (g_file_get_contents: one malloc'd buffer). */
static void load(Image *image, const char *dir) {
    char *path = g_build_filename(dir, image->name, NULL);
    gchar *data;
    gsize len;
    GError *error = NULL;
    if (!g_file_get_contents(path, &data, &len, &error)) {
        fprintf(stderr, "floor: cannot read %s: %s\n", path, error->message);
        exit(2);
    }
    image->data = data;
    image->len = len;
    g_free(path);
}

/* The file names: column 3 of DIR/manifest.tsv, header line ("file") skipped. */
static void read_manifest(const char *dir) {
    char *path = g_build_filename(dir, "manifest.tsv", NULL);
    gchar *text;
    GError *error = NULL;
    if (!g_file_get_contents(path, &text, NULL, &error)) {
        fprintf(stderr, "floor: cannot read %s: %s\n", path, error->message);
        exit(2);
    }
    gchar **lines = g_strsplit(text, "\n", -1);
    images = g_new0(Image, g_strv_length(lines));
    for (gchar **line = lines; *line; line++) {
        gchar **cols = g_strsplit(*line, "\t", 4);
        if (g_strv_length(cols) >= 3 && strcmp(cols[2], "file") != 0 && cols[2][0]) {
            images[image_count].name = g_strdup(cols[2]);
            load(&images[image_count], dir);
            image_count++;
        }
        g_strfreev(cols);
    }
    g_strfreev(lines);
    g_free(text);
    g_free(path);
    if (image_count == 0) die("no images in the manifest");
}

int main(int argc, char **argv) {
    const char *corpus = NULL;
    long threads = sysconf(_SC_NPROCESSORS_ONLN); /* = thumbd's --workers default (cores) */
    double seconds = 30;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--corpus")) corpus = argv[i + 1];
        else if (!strcmp(argv[i], "--threads")) threads = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--count")) max_requests = atol(argv[i + 1]);
        else die("usage: floor --corpus DIR [--threads N] [--seconds S] [--count N]");
    }
    if (!corpus || argc % 2 == 0 || threads < 1 || !(seconds > 0))
        die("usage: floor --corpus DIR [--threads N] [--seconds S] [--count N]");

    if (VIPS_INIT(argv[0])) die("vips_init failed");
    /* One libvips worker thread per pipeline: each request runs on the thread that calls it, and
     * the parallelism is our N threads, as in thumbd (N workers, each with concurrency 1).
     * Otherwise each request would also spawn its own pool and N would not mean N cores. */
    vips_concurrency_set(1);
    /* No operation cache: the same (buffer, width) pair comes round again every
     * count x 200 requests, and a cached result would skip the work; thumbd turns it off too.
     * max_mem/max_files 0 as well, so nothing is held between requests. */
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);

    read_manifest(corpus); /* every source in memory before the clock starts */

    pthread_t *ids = g_new(pthread_t, threads);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 8 << 20); /* as thumbd-bench's threads */
    double cpu0 = cpu_seconds();
    double start = now();
    deadline = start + seconds;
    for (long t = 0; t < threads; t++)
        if ((errno = pthread_create(&ids[t], &attr, worker, NULL))) die("pthread_create failed");
    for (long t = 0; t < threads; t++) pthread_join(ids[t], NULL);
    double elapsed = now() - start;
    double cpu = cpu_seconds() - cpu0;

    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    long ok = atomic_load(&done), errors = atomic_load(&failed);
    char per_request[32] = "null"; /* no figure without a request */
    if (ok > 0) snprintf(per_request, sizeof per_request, "%.2f", cpu * 1000 / ok);
    for (long i = 0; i < image_count; i++)
        if (atomic_load(&images[i].failures))
            fprintf(stderr, "floor: %s: %ld failed requests\n", images[i].name, atomic_load(&images[i].failures));
    printf("{\"requests\": %ld, \"errors\": %ld, \"seconds\": %.3f, \"rps\": %.2f, \"cpu_seconds\": %.3f, "
           "\"cpu_ms_per_request\": %s, \"peak_rss_bytes\": %ld, \"threads\": %ld, \"images\": %ld, "
           "\"tool\": \"floor\", \"libvips\": \"%s\"}\n",
           ok, errors, elapsed, ok / elapsed, cpu, per_request,
           u.ru_maxrss * 1024L /* KiB on Linux */, threads, image_count, vips_version_string());
    return errors ? 1 : 0;
}
