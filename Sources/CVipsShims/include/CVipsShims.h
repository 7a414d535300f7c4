#pragma once
// Why this target exists: most libvips operations are C variadic functions
// (`vips_thumbnail_buffer(buf, len, &out, width, "height", h, ..., NULL)`), and Swift cannot
// call C variadics. Each `cvips_` function below is a fixed-arity wrapper with a one-to-three
// line body that passes exactly the options thumbd's pipeline needs and ends the list with NULL.
// No policy lives here: the Swift module `Vips`, the only one that imports this, decides what to
// pass. Non-variadic libvips calls (vips_init, vips_image_get_int, vips_image_copy_memory,
// g_object_unref, ...) are called from Swift directly and need no shim; so do the test fixtures
// (`VipsFixtureImage`), which run operations by name through the generic operation API
// (vips_operation_new, vips_object_set_from_string, vips_cache_operation_buildp).
#include <vips/vips.h>

// MARK: Start-up

/// vips_init(argv0) behind a process-wide g_once. Not a variadic: vips_init only guards itself with
/// a plain flag, so a second thread calling it during start-up returns at once and then finds no
/// classes ("class gifsave_buffer not found", seen in tests). `Vips.initialize` is its one caller,
/// and every Swift module that starts libvips (the service, the test fixtures) goes through
/// that. Returns vips_init's result. It also drops libvips' warnings ("VipsJpeg: Premature end of
/// JPEG file"): their text comes from hostile input, and decisions are taken from return codes
/// anyway. And it turns Orc off unless liborc is 0.4.34 or later or libvips' calls into it are
/// serialised (0.4.33's code allocator races between threads, see the .c).
int cvips_init_once(const char *argv0);

/// The loaded liborc's version ("0.4.33"), NULL when libvips brought none.
const char *cvips_orc_version(void);

/// Whether that liborc version allocates its code memory under its lock (0.4.34 and later).
int cvips_orc_is_safe(const char *version);

/// Whether libvips' calls to orc_program_compile and orc_program_free reach this target's
/// serialising wrappers (1) or liborc directly (0).
int cvips_orc_is_serialised(void);

// MARK: Loading

/// vips_image_new_from_buffer with a loader option string such as "[access=sequential]". It runs
/// every loader's sniffer to pick one: for the tests' decoder only, never on untrusted bytes.
VipsImage *cvips_image_new_from_buffer(const void *buf, size_t len, const char *option_string);

/// Runs load operation `loader` ("jpegload_buffer", ...) on the bytes, sequential access: the header
/// with that loader only, no sniffing. The image borrows `buf`, which must outlive it. NULL on failure.
VipsImage *cvips_load_buffer(const char *loader, const void *buf, size_t len);

/// vips_thumbnail_buffer with the options the service uses: decode with shrink-on-load and resize
/// to `width` x `height` (`size` a VipsSize), lazily, in the stored orientation, uncropped. It
/// never rotates or crops: 8.14 does both inside the call after copying the whole resized image
/// to memory (thumbnail.c), out of reach of a time limit; VipsPipeline does them after its own
/// copy. `option_string` goes to the loader (in 8.14 the only way `fail_on` reaches it).
int cvips_thumbnail_buffer(const void *buf, size_t len, VipsImage **out, int width, int height, VipsSize size,
                           const char *option_string);

/// vips_thumbnail_image: the same resize as thumbnail_buffer, never rotating or cropping, from an
/// image in memory (a decoded intermediate) instead of encoded bytes.
int cvips_thumbnail_image(VipsImage *in, VipsImage **out, int width, int height, VipsSize size);

/// vips_autorot: turned upright by the image's orientation tag, which it removes.
int cvips_autorot(VipsImage *in, VipsImage **out);

/// vips_smartcrop to `width` x `height`, keeping what `interesting` picks (centre, attention).
int cvips_smartcrop(VipsImage *in, VipsImage **out, int width, int height, VipsInteresting interesting);

/// vips_smartcrop with `interesting` attention, for its `attention_x` and `attention_y` outputs only
/// (the centre of what it would keep, in `in`'s coordinates); the cropped image is dropped.
int cvips_smartcrop_attention(VipsImage *in, int width, int height, int *x, int *y);

/// vips_extract_area.
int cvips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height);

/// The same `width` x `height` window at (`left`, `top`) of every `page_height`-row page of `in`,
/// stacked again into a new image in memory (header and metadata from `in`). `in` must be in memory
/// (vips_image_copy_memory). Copied row by row, not with vips_arrayjoin of vips_extract_area: 8.14's
/// arrayjoin forwards pointers into regions it then frees (libvips#3835, fixed in 8.15.2; the
/// bookworm `vips arrayjoin` CLI crashes on .v inputs with it), and the copy is output-sized.
int cvips_crop_pages(VipsImage *in, VipsImage **out, int left, int top, int width, int height, int page_height);

// MARK: Deadlines

/// A point on CLOCK_MONOTONIC after which watched evaluations stop, shared by the images of one
/// call. Reference-counted: the caller owns one reference (`cvips_deadline_release`), each
/// watched image's signal handlers hold their own until the image goes.
typedef struct CVipsDeadline CVipsDeadline;

/// A deadline `nanoseconds` from now (saturating).
CVipsDeadline *cvips_deadline_new(int64_t nanoseconds);

/// Drops the caller's reference.
void cvips_deadline_release(CVipsDeadline *deadline);

/// Whether the deadline has passed.
int cvips_deadline_passed(const CVipsDeadline *deadline);

/// Turns on progress signals for `image` (vips_image_set_progress) and handles its "preeval" and
/// "eval" signals: once the deadline has passed, vips_image_set_kill on it. Call it on the image
/// about to be evaluated (the input of vips_image_copy_memory), before anything downstream of it
/// is built: 8.14 passes the signalling image down only when a link is made (generate.c). The
/// sink emits "eval" once per tile it finishes and stops at the next vips_region_prepare of a
/// killed image (region.c), returning an error.
void cvips_deadline_watch(VipsImage *image, CVipsDeadline *deadline);

/// cvips_thumbnail_buffer for a streaming loader (JPEG, PNG, TIFF), read through a source whose
/// reads fail once `deadline` has passed: those loaders read the bytes as they decode, so a long
/// decode stops within one read (4 KiB for JPEG) of the deadline. The sink's "eval" signal
/// (cvips_deadline_watch) comes once per 128 output rows, after most of the decode of each.
/// vips_thumbnail_source picks the loader as thumbnail_buffer does (the `_source` sniffers, in
/// the same order; see VipsPipeline.checkLoader) and runs the same pipeline: the same pixels.
int cvips_thumbnail_timed(const void *buf, size_t len, CVipsDeadline *deadline, VipsImage **out, int width,
                          int height, VipsSize size, const char *option_string);

// MARK: Colour and geometry

/// The rendering intents the ICC profile in `data` supports as an input profile, asked of lcms2
/// exactly as 8.14's icc_transform asks before it uses an embedded profile
/// (cmsIsIntentSupported): bit (1 << intent) for each VipsIntent. -1 when lcms2 cannot parse it.
/// (lcms2 is libvips' own CMS; libvips-dev depends on liblcms2-dev.)
int cvips_icc_input_intents(const void *data, size_t len);

/// vips_icc_transform to `output_profile` with `intent`, importing with the embedded profile (8.14
/// falls back to its built-in sRGB/CMYK profile, silently, when the embedded one lacks `intent`:
/// check with cvips_icc_input_intents first). Always writes 8 bits.
int cvips_icc_transform(VipsImage *in, VipsImage **out, const char *output_profile, VipsIntent intent);

/// vips_colourspace.
int cvips_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space);

/// vips_flatten onto a uniform background of `value` in every band (e.g. 255 = white).
int cvips_flatten(VipsImage *in, VipsImage **out, double value);

/// vips_copy: a new image header over the same pixels, whose metadata the caller may then edit.
int cvips_copy(VipsImage *in, VipsImage **out);

/// vips_cast.
int cvips_cast(VipsImage *in, VipsImage **out, VipsBandFormat format);

/// vips_extract_band of `n` bands starting at `band`.
int cvips_extract_band(VipsImage *in, VipsImage **out, int band, int n);

/// vips_min: the smallest pixel value over all bands.
int cvips_min(VipsImage *in, double *out);

// MARK: Saving (all output buffers are g_malloc'd; free with g_free)

/// The bytes malloc set aside for `block` (malloc_usable_size): what a kept buffer really costs.
size_t cvips_allocated_size(const void *block);

/// vips_jpegsave_buffer with Q, optimize_coding and interlace; `strip` drops all metadata.
int cvips_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, int quality, gboolean strip,
                          gboolean optimize_coding, gboolean interlace);

/// vips_pngsave_buffer with zlib `compression` 0...9.
int cvips_pngsave_buffer(VipsImage *in, void **buf, size_t *len, int compression, gboolean strip);

/// vips_webpsave_buffer.
int cvips_webpsave_buffer(VipsImage *in, void **buf, size_t *len, int quality, gboolean strip);

/// vips_gifsave_buffer (cgif and libimagequant) with its quantiser and frame options. Animated when
/// `in` has a `page-height` metadata field (then also its `delay` and `loop`).
int cvips_gifsave_buffer(VipsImage *in, void **buf, size_t *len, int effort, double dither, int bitdepth,
                         double interframe_maxerror, double interpalette_maxerror);

/// vips_heifsave_buffer as 8-bit AV1 (AVIF) with the given CPU `effort` 0...9.
int cvips_avifsave_buffer(VipsImage *in, void **buf, size_t *len, int quality, int effort, gboolean strip);
