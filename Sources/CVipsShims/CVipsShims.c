#include "CVipsShims.h"

#include <dlfcn.h>
#include <stdio.h>
#include <vips/vector.h>

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
    // No Orc (libvips' run-time SIMD compiler) before liborc 0.4.34: 0.4.33, Debian bookworm's,
    // hands out code memory without holding its lock (fixed upstream in 0.4.34, commit e48fa54),
    // so two threads building resize operations at once corrupt its chunk list and then the
    // malloc heap. Decided before any worker thread exists. Orc saves ~4 % of a cold miss's CPU
    // (docs/architecture.md), so a fixed liborc gets it back.
    if (!cvips_orc_is_safe(cvips_orc_version())) vips_vector_set_enabled(FALSE);
    return GINT_TO_POINTER(status);
}

int cvips_init_once(const char *argv0) {
    static GOnce once = G_ONCE_INIT;
    return GPOINTER_TO_INT(g_once(&once, cvips_init_body, (gpointer)argv0));
}

VipsImage *cvips_image_new_from_buffer(const void *buf, size_t len, const char *option_string) {
    return vips_image_new_from_buffer(buf, len, option_string, NULL);
}

int cvips_thumbnail_buffer(const void *buf, size_t len, VipsImage **out, int width, int height,
                           VipsSize size, VipsInteresting crop, const char *option_string) {
    return vips_thumbnail_buffer((void *)buf, len, out, width, "height", height, "size", size, "crop", crop,
                                 "option_string", option_string, NULL);
}

int cvips_icc_transform(VipsImage *in, VipsImage **out, const char *output_profile,
                        const char *input_profile, gboolean embedded) {
    return vips_icc_transform(in, out, output_profile, "input_profile", input_profile, "embedded", embedded,
                              "depth", 8, NULL);
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

int cvips_thumbnail_image(VipsImage *in, VipsImage **out, int width, int height, VipsSize size,
                          VipsInteresting crop) {
    return vips_thumbnail_image(in, out, width, "height", height, "size", size, "crop", crop, NULL);
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

int cvips_avifsave_buffer(VipsImage *in, void **buf, size_t *len, int quality, int effort, gboolean strip) {
    return vips_heifsave_buffer(in, buf, len, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1, "Q", quality,
                                "bitdepth", 8, "effort", effort, "strip", strip, NULL);
}
