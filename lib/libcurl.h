/* libcurl.h - libcurl, loaded when the first HTTP request needs it */
#ifndef ART_LIBCURL_H
#define ART_LIBCURL_H

/* The calls go through pointers: gcc's checks of the macros cannot. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#include "err.h"

/*
 * libcurl and the thirty libraries it needs (TLS, HTTP/2, IDN, LDAP,
 * Kerberos...) cost every process that links them ~10 ms at start,
 * before main() (bench/README.md), and a ring starts four processes per
 * run.  Only a model call to a real provider or an HTTP worker uses them,
 * so they are opened with dlopen(3) the first time one does, and called
 * through this table.  The names are libcurl's without "curl_".
 */
struct art_curl_api {
	__typeof__(curl_global_init)		*global_init;
	__typeof__(curl_global_cleanup)		*global_cleanup;
	__typeof__(curl_easy_init)		*easy_init;
	__typeof__(curl_easy_cleanup)		*easy_cleanup;
	__typeof__(curl_easy_setopt)		*easy_setopt;
	__typeof__(curl_easy_getinfo)		*easy_getinfo;
	__typeof__(curl_easy_strerror)		*easy_strerror;
	__typeof__(curl_multi_init)		*multi_init;
	__typeof__(curl_multi_cleanup)		*multi_cleanup;
	__typeof__(curl_multi_setopt)		*multi_setopt;
	__typeof__(curl_multi_add_handle)	*multi_add_handle;
	__typeof__(curl_multi_remove_handle)	*multi_remove_handle;
	__typeof__(curl_multi_socket_action)	*multi_socket_action;
	__typeof__(curl_multi_timeout)		*multi_timeout;
	__typeof__(curl_multi_info_read)	*multi_info_read;
	__typeof__(curl_multi_strerror)		*multi_strerror;
	__typeof__(curl_slist_append)		*slist_append;
	__typeof__(curl_slist_free_all)		*slist_free_all;
	__typeof__(curl_version_info)		*version_info;
};

/* Filled by art_curl_load(); NULL pointers before. */
extern struct art_curl_api art_curl;

/*
 * Opens libcurl and runs curl_global_init() once per process; later
 * calls return at once.  -1 with err code "http" when the library cannot
 * be found or started (the message names it).
 */
int	art_curl_load(struct art_err *);
/*
 * The version of the libcurl art_curl_load() opens, "7.88.1" (static, as
 * curl_version_info keeps it), loading it; NULL with err when it cannot.
 */
const char *art_curl_version(struct art_err *);
/* curl_global_cleanup() when loaded; the library stays mapped. */
void	art_curl_unload(void);

#endif
