#pragma once
// Why this target exists: curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are C
// variadic functions, and Swift cannot call C variadics. Each `ccurl_` function below fixes the
// type of the single variadic argument so Swift sees an ordinary function. libcurl reads that
// argument as the type the option documents (long, pointer, curl_off_t, function pointer), so
// the caller must pick the variant matching the option: passing an `int` where libcurl reads a
// `long`, or a pointer where it reads a curl_off_t, is undefined behaviour — which is the whole
// reason these are separate functions. No policy lives here: the Swift module `Curl` decides
// which options to set. Non-variadic calls (curl_easy_init, curl_multi_poll, ...) are called
// from Swift directly and need no shim.
#include <curl/curl.h>

// MARK: curl_easy_setopt

/// For CURLOPTTYPE_LONG options (CURLOPT_NOSIGNAL, CURLOPT_CONNECTTIMEOUT_MS, ...).
CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value);

/// For CURLOPTTYPE_STRINGPOINT options (CURLOPT_URL, CURLOPT_USERAGENT, ...). libcurl copies
/// the string, so it only has to live for the duration of the call. NULL resets the option.
CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);

/// For CURLOPTTYPE_OBJECTPOINT / CURLOPTTYPE_CBPOINT options (CURLOPT_PRIVATE,
/// CURLOPT_WRITEDATA, CURLOPT_OPENSOCKETDATA, ...). libcurl stores the pointer as is.
CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);

/// For CURLOPTTYPE_OFF_T options (CURLOPT_MAXFILESIZE_LARGE, ...): a long would be read wrongly
/// wherever curl_off_t and long differ in size.
CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);

/// For CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION (both take a curl_write_callback).
CURLcode ccurl_easy_setopt_write_callback(CURL *handle, CURLoption option, curl_write_callback callback);

/// For CURLOPT_OPENSOCKETFUNCTION (the hook that runs after DNS and before connect).
CURLcode ccurl_easy_setopt_opensocket_callback(CURL *handle, curl_opensocket_callback callback);

/// For CURLOPT_CLOSESOCKETFUNCTION (closes a socket the open-socket callback made).
CURLcode ccurl_easy_setopt_closesocket_callback(CURL *handle, curl_closesocket_callback callback);

/// For CURLOPT_PREREQFUNCTION (runs once a connection is made or picked for reuse, before the
/// request is sent).
CURLcode ccurl_easy_setopt_prereq_callback(CURL *handle, curl_prereq_callback callback);

// MARK: curl_easy_getinfo

/// For CURLINFO_LONG infos (CURLINFO_RESPONSE_CODE, ...).
CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);

/// For CURLINFO_STRING infos (CURLINFO_CONTENT_TYPE, CURLINFO_REDIRECT_URL,
/// CURLINFO_PRIMARY_IP, ...). The string belongs to the handle: copy it before cleanup.
CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, const char **value);

/// For CURLINFO_PRIVATE: libcurl hands back the pointer stored with CURLOPT_PRIVATE.
CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value);

/// For CURLINFO_OFF_T infos (CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, ...); -1 when unknown.
CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);

/// For CURLINFO_SOCKET infos (CURLINFO_ACTIVESOCKET); CURL_SOCKET_BAD when there is none.
CURLcode ccurl_easy_getinfo_socket(CURL *handle, CURLINFO info, curl_socket_t *value);

// MARK: curl_multi_setopt

/// For long-valued multi options (CURLMOPT_MAX_TOTAL_CONNECTIONS, ...).
CURLMcode ccurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value);
