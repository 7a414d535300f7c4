#define _GNU_SOURCE  // RTLD_NEXT
#include "CVipsShims.h"

#include <dlfcn.h>
#include <errno.h>
#include <lcms2.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <vips/vector.h>

// MARK: Orc's code memory, serialised

// liborc before 0.4.34 (0.4.33 is Debian bookworm's) hands out code memory without holding its
// lock and frees it without taking it (fixed upstream in 0.4.34, commit e48fa54): two threads
// building resizes at once corrupt its chunk list and then the malloc heap. libvips reaches that
// memory through exactly two liborc calls (iofuncs/vector.c, 8.14): orc_program_compile, when an
// operation with a SIMD path is built (reducev, convi, morph, arithmetic), and orc_program_free,
// when it is disposed, on whichever thread drops the last reference. Defining them here puts
// them in the executable, which the dynamic linker searches before liborc, so libvips' calls
// come here (ld exports an executable's symbols that its shared libraries reference); each takes
// one process-wide lock and calls liborc's own. Running compiled code takes no lock. The lock is
// recursive in case liborc ever calls one from the other through its PLT.
static pthread_mutex_t cvips_orc_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int (*cvips_orc_compile_next)(void *);
static void (*cvips_orc_free_next)(void *);

int orc_program_compile(void *program) {
    pthread_mutex_lock(&cvips_orc_lock);
    if (!cvips_orc_compile_next) cvips_orc_compile_next = (int (*)(void *))dlsym(RTLD_NEXT, "orc_program_compile");
    // ORC_COMPILE_RESULT_UNKNOWN_PARSE: libvips takes any result >= 0x100 as "not compiled" and
    // runs its plain C path.
    int result = cvips_orc_compile_next ? cvips_orc_compile_next(program) : 0x200;
    pthread_mutex_unlock(&cvips_orc_lock);
    return result;
}

void orc_program_free(void *program) {
    pthread_mutex_lock(&cvips_orc_lock);
    if (!cvips_orc_free_next) cvips_orc_free_next = (void (*)(void *))dlsym(RTLD_NEXT, "orc_program_free");
    if (cvips_orc_free_next) cvips_orc_free_next(program);
    pthread_mutex_unlock(&cvips_orc_lock);
}

int cvips_orc_is_serialised(void) {
    // The symbol every library binds to is the first in the global scope: ours only when the
    // executable exports it (a program linked without libvips on its link line may not).
    return dlsym(RTLD_DEFAULT, "orc_program_compile") == (void *)orc_program_compile &&
           dlsym(RTLD_DEFAULT, "orc_program_free") == (void *)orc_program_free;
}

const char *cvips_orc_version(void) {
    // Looked up, not linked: liborc comes in as libvips' dependency, and a libvips built without
    // Orc has none (NULL then).
    const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "orc_version_string");
    return version ? version() : NULL;
}

int cvips_orc_is_safe(const char *version) {
    unsigned major = 0, minor = 0, micro = 0;
    if (!version || sscanf(version, "%u.%u.%u", &major, &minor, &micro) < 2) return 0;
    if (major > 0 || minor > 4) return 1;
    return minor == 4 && micro >= 34;
}

static void cvips_drop_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {}

static gpointer cvips_init_body(gpointer argv0) {
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, cvips_drop_log, NULL);
    int status = vips_init((const char *)argv0);
    // Orc (libvips' run-time SIMD compiler) only where it cannot corrupt the heap: liborc 0.4.34
    // or later, or calls into an older one serialised (above). Otherwise off. Decided before any
    // worker thread exists. Orc saves ~4 % of a cold miss's CPU (docs/architecture.md).
    if (!cvips_orc_is_safe(cvips_orc_version()) && !cvips_orc_is_serialised()) vips_vector_set_enabled(FALSE);
    return GINT_TO_POINTER(status);
}

int cvips_init_once(const char *argv0) {
    static GOnce once = G_ONCE_INIT;
    return GPOINTER_TO_INT(g_once(&once, cvips_init_body, (gpointer)argv0));
}

VipsImage *cvips_image_new_from_buffer(const void *buf, size_t len, const char *option_string) {
    return vips_image_new_from_buffer(buf, len, option_string, NULL);
}

VipsImage *cvips_load_buffer(const char *loader, const void *buf, size_t len) {
    VipsBlob *blob = vips_blob_new(NULL, buf, len);  // borrows buf, like vips_image_new_from_buffer
    VipsImage *out = NULL;
    int result = vips_call(loader, blob, &out, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    vips_area_unref(VIPS_AREA(blob));
    return result == 0 ? out : NULL;
}

int cvips_thumbnail_buffer(const void *buf, size_t len, VipsImage **out, int width, int height, VipsSize size,
                           const char *option_string) {
    return vips_thumbnail_buffer((void *)buf, len, out, width, "height", height, "size", size, "no_rotate", TRUE,
                                 "option_string", option_string, NULL);
}

int cvips_icc_input_intents(const void *data, size_t len) {
    cmsHPROFILE profile = cmsOpenProfileFromMem(data, (cmsUInt32Number)len);
    if (!profile) return -1;
    int intents = 0;
    for (int intent = VIPS_INTENT_PERCEPTUAL; intent <= VIPS_INTENT_ABSOLUTE; intent++)
        if (cmsIsIntentSupported(profile, intent, LCMS_USED_AS_INPUT)) intents |= 1 << intent;
    cmsCloseProfile(profile);
    return intents;
}

int cvips_icc_transform(VipsImage *in, VipsImage **out, const char *output_profile, VipsIntent intent) {
    return vips_icc_transform(in, out, output_profile, "embedded", TRUE, "intent", intent, "depth", 8, NULL);
}

int cvips_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space) {
    return vips_colourspace(in, out, space, NULL);
}

int cvips_flatten(VipsImage *in, VipsImage **out, double value) {
    VipsArrayDouble *background = vips_array_double_new(&value, 1);
    int result = vips_flatten(in, out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return result;
}

int cvips_copy(VipsImage *in, VipsImage **out) {
    return vips_copy(in, out, NULL);
}

int cvips_cast(VipsImage *in, VipsImage **out, VipsBandFormat format) {
    return vips_cast(in, out, format, NULL);
}

int cvips_extract_band(VipsImage *in, VipsImage **out, int band, int n) {
    return vips_extract_band(in, out, band, "n", n, NULL);
}

int cvips_thumbnail_image(VipsImage *in, VipsImage **out, int width, int height, VipsSize size) {
    return vips_thumbnail_image(in, out, width, "height", height, "size", size, "no_rotate", TRUE, NULL);
}

int cvips_autorot(VipsImage *in, VipsImage **out) {
    return vips_autorot(in, out, NULL);
}

int cvips_smartcrop(VipsImage *in, VipsImage **out, int width, int height, VipsInteresting interesting) {
    return vips_smartcrop(in, out, width, height, "interesting", interesting, NULL);
}

int cvips_smartcrop_attention(VipsImage *in, int width, int height, int *x, int *y) {
    VipsImage *out = NULL;
    int result = vips_smartcrop(in, &out, width, height, "interesting", VIPS_INTERESTING_ATTENTION, "attention_x", x,
                                "attention_y", y, NULL);
    if (out) g_object_unref(out);
    return result;
}

int cvips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

int cvips_crop_pages(VipsImage *in, VipsImage **out, int left, int top, int width, int height, int page_height) {
    if (page_height <= 0 || in->Ysize % page_height != 0 || left < 0 || top < 0 || width <= 0 || height <= 0 ||
        left + width > in->Xsize || top + height > page_height) {
        vips_error("cvips_crop_pages", "bad crop window");
        return -1;
    }
    if (vips_image_wio_input(in)) return -1;
    int pages = in->Ysize / page_height;
    VipsImage *image = vips_image_new_memory();
    if (vips_image_pipelinev(image, VIPS_DEMAND_STYLE_ANY, in, NULL)) {
        g_object_unref(image);
        return -1;
    }
    image->Xsize = width;
    image->Ysize = height * pages;
    for (int page = 0; page < pages; page++)
        for (int y = 0; y < height; y++)
            if (vips_image_write_line(image, page * height + y,
                                      VIPS_IMAGE_ADDR(in, left, page * page_height + top + y))) {
                g_object_unref(image);
                return -1;
            }
    *out = image;
    return 0;
}

// MARK: Deadlines

// Read on libvips' own threads (eval signals, a timed source's reads), which get their work from
// glib's thread pool under a GMutex. glib is not built for ThreadSanitizer, so that handoff is
// invisible to it; the release store here and the acquire loads make the order explicit in our
// own code (on x86-64 both are plain moves).
struct CVipsDeadline {
    gint64 at;  // CLOCK_MONOTONIC, nanoseconds; written once, before the deadline is shared
};

static gint64 cvips_monotonic_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (gint64)now.tv_sec * 1000000000 + now.tv_nsec;
}

CVipsDeadline *cvips_deadline_new(int64_t nanoseconds) {
    CVipsDeadline *deadline = g_atomic_rc_box_new0(CVipsDeadline);
    gint64 now = cvips_monotonic_now();
    __atomic_store_n(&deadline->at, nanoseconds > G_MAXINT64 - now ? G_MAXINT64 : now + nanoseconds, __ATOMIC_RELEASE);
    return deadline;
}

void cvips_deadline_release(CVipsDeadline *deadline) { g_atomic_rc_box_release(deadline); }

int cvips_deadline_passed(const CVipsDeadline *deadline) {
    return cvips_monotonic_now() >= __atomic_load_n(&deadline->at, __ATOMIC_ACQUIRE);
}

static void cvips_deadline_check(VipsImage *image, VipsProgress *progress, gpointer deadline) {
    if (cvips_deadline_passed(deadline)) vips_image_set_kill(image, TRUE);
}

static void cvips_deadline_drop(gpointer deadline, GClosure *closure) { g_atomic_rc_box_release(deadline); }

void cvips_deadline_watch(VipsImage *image, CVipsDeadline *deadline) {
    vips_image_set_progress(image, TRUE);
    // Signals go to the most downstream image that asked for progress: this one, unless it
    // inherited an upstream image's when it was made.
    VipsImage *signalling = image->progress_signal;
    g_signal_connect_data(signalling, "preeval", G_CALLBACK(cvips_deadline_check),
                          g_atomic_rc_box_acquire(deadline), cvips_deadline_drop, 0);
    g_signal_connect_data(signalling, "eval", G_CALLBACK(cvips_deadline_check),
                          g_atomic_rc_box_acquire(deadline), cvips_deadline_drop, 0);
}

// A memory source whose reads fail once the deadline has passed. Not a VipsSource over the
// memory itself (vips_source_new_from_memory): libvips copies from those without calling any
// method, and nothing else runs in a loader's decode often enough to check a clock.
typedef struct {
    VipsSource parent_object;
    const unsigned char *data;
    gint64 length;
    CVipsDeadline *deadline;
    // Reads and seeks come from whichever libvips thread runs the loader at the time (handed on
    // under glib's locks, invisible to ThreadSanitizer as for CVipsDeadline): each call starts
    // with an acquire load of `position` and ends with a release store, and the fields above are
    // written before the first release store, so every call is ordered after the setup and the
    // call before it in code TSan sees.
    gint64 position;
} CVipsTimedSource;

typedef struct {
    VipsSourceClass parent_class;
} CVipsTimedSourceClass;

G_DEFINE_TYPE(CVipsTimedSource, cvips_timed_source, VIPS_TYPE_SOURCE)

static gint64 cvips_timed_source_read(VipsSource *source, void *buffer, size_t length) {
    CVipsTimedSource *timed = (CVipsTimedSource *)source;
    gint64 position = __atomic_load_n(&timed->position, __ATOMIC_ACQUIRE);
    if (cvips_deadline_passed(timed->deadline)) {
        errno = ETIMEDOUT;  // vips_source_read reports it: "read error"
        return -1;
    }
    gint64 available = MIN((gint64)length, timed->length - position);
    memcpy(buffer, timed->data + position, available);
    __atomic_store_n(&timed->position, position + available, __ATOMIC_RELEASE);
    return available;
}

static gint64 cvips_timed_source_seek(VipsSource *source, gint64 offset, int whence) {
    CVipsTimedSource *timed = (CVipsTimedSource *)source;
    gint64 position = __atomic_load_n(&timed->position, __ATOMIC_ACQUIRE);
    gint64 base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? position : timed->length;
    if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return -1;
    if (base + offset < 0 || base + offset > timed->length) return -1;
    __atomic_store_n(&timed->position, base + offset, __ATOMIC_RELEASE);
    return base + offset;
}

static void cvips_timed_source_finalize(GObject *object) {
    g_atomic_rc_box_release(((CVipsTimedSource *)object)->deadline);
    G_OBJECT_CLASS(cvips_timed_source_parent_class)->finalize(object);
}

static void cvips_timed_source_class_init(CVipsTimedSourceClass *class) {
    G_OBJECT_CLASS(class)->finalize = cvips_timed_source_finalize;
    VIPS_OBJECT_CLASS(class)->nickname = "thumbd_timed_source";
    VIPS_OBJECT_CLASS(class)->description = "memory source with a deadline";
    VIPS_SOURCE_CLASS(class)->read = cvips_timed_source_read;
    VIPS_SOURCE_CLASS(class)->seek = cvips_timed_source_seek;
}

static void cvips_timed_source_init(CVipsTimedSource *timed) {}

int cvips_thumbnail_timed(const void *buf, size_t len, CVipsDeadline *deadline, VipsImage **out, int width,
                          int height, VipsSize size, const char *option_string) {
    CVipsTimedSource *source = g_object_new(cvips_timed_source_get_type(), NULL);
    source->data = buf;
    source->length = (gint64)len;
    source->deadline = g_atomic_rc_box_acquire(deadline);
    __atomic_store_n(&source->position, 0, __ATOMIC_RELEASE);  // publishes the fields above
    if (vips_object_build(VIPS_OBJECT(source))) {
        g_object_unref(source);
        return -1;
    }
    // The loader keeps its own reference to the source for as long as the image needs it.
    int result = vips_thumbnail_source(VIPS_SOURCE(source), out, width, "height", height, "size", size,
                                       "no_rotate", TRUE, "option_string", option_string, NULL);
    g_object_unref(source);
    return result;
}

int cvips_min(VipsImage *in, double *out) {
    return vips_min(in, out, NULL);
}

int cvips_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, int quality, gboolean strip,
                          gboolean optimize_coding, gboolean interlace) {
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "strip", strip, "optimize_coding", optimize_coding,
                                "interlace", interlace, NULL);
}

int cvips_pngsave_buffer(VipsImage *in, void **buf, size_t *len, int compression, gboolean strip) {
    return vips_pngsave_buffer(in, buf, len, "compression", compression, "strip", strip, NULL);
}

int cvips_webpsave_buffer(VipsImage *in, void **buf, size_t *len, int quality, gboolean strip) {
    return vips_webpsave_buffer(in, buf, len, "Q", quality, "strip", strip, NULL);
}

int cvips_gifsave_buffer(VipsImage *in, void **buf, size_t *len, int effort, double dither, int bitdepth,
                         double interframe_maxerror, double interpalette_maxerror) {
    return vips_gifsave_buffer(in, buf, len, "effort", effort, "dither", dither, "bitdepth", bitdepth,
                               "interframe_maxerror", interframe_maxerror, "interpalette_maxerror",
                               interpalette_maxerror, "strip", TRUE, NULL);
}

int cvips_avifsave_buffer(VipsImage *in, void **buf, size_t *len, int quality, int effort, gboolean strip) {
    return vips_heifsave_buffer(in, buf, len, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1, "Q", quality,
                                "bitdepth", 8, "effort", effort, "strip", strip, NULL);
}

size_t cvips_allocated_size(const void *block) { return block ? malloc_usable_size((void *)block) : 0; }
