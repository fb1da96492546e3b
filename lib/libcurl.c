/* libcurl.c - libcurl, loaded when the first HTTP request needs it */
#include <config.h>

#include "libcurl.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>

struct art_curl_api art_curl;

static bool loaded;

/* The library's names, most likely first: the one we were built with. */
static const char *const sonames[] = {
	ART_CURL_SONAME, "libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"
};

/* Each member of art_curl and the symbol it holds. */
#define SYM(m)	{ (void **)&art_curl.m, "curl_" #m }
static const struct {
	void		**slot;
	const char	*name;
} syms[] = {
	SYM(global_init), SYM(global_cleanup), SYM(easy_init),
	SYM(easy_cleanup), SYM(easy_setopt), SYM(easy_getinfo),
	SYM(easy_strerror), SYM(multi_init), SYM(multi_cleanup),
	SYM(multi_setopt), SYM(multi_add_handle), SYM(multi_remove_handle),
	SYM(multi_socket_action), SYM(multi_timeout), SYM(multi_info_read),
	SYM(multi_strerror), SYM(slist_append), SYM(slist_free_all),
	SYM(version_info)
};
#undef SYM

int
art_curl_load(struct art_err *err)
{
	const char *why = "not found";
	void *lib = NULL;
	size_t i;

	if (loaded)
		return 0;
	for (i = 0; lib == NULL && i < sizeof(sonames) / sizeof(*sonames);
	    i++)
		lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		if ((why = dlerror()) == NULL)
			why = "not found";
		return art_err_set(err, "http", "cannot load libcurl (%s): "
		    "%.150s", ART_CURL_SONAME, why);
	}
	for (i = 0; i < sizeof(syms) / sizeof(*syms); i++) {
		/* POSIX's way to store a function pointer from dlsym(). */
		*syms[i].slot = dlsym(lib, syms[i].name);
		if (*syms[i].slot == NULL) {
			dlclose(lib);
			return art_err_set(err, "http", "libcurl has no %s: "
			    "too old", syms[i].name);
		}
	}
	if (art_curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		dlclose(lib);
		return art_err_set(err, "http", "libcurl would not start");
	}
	loaded = true;
	return 0;
}

const char *
art_curl_version(struct art_err *err)
{
	curl_version_info_data *d;

	if (art_curl_load(err) == -1)
		return NULL;
	if ((d = art_curl.version_info(CURLVERSION_NOW)) == NULL ||
	    d->version == NULL) {
		art_err_set(err, "http", "libcurl gives no version");
		return NULL;
	}
	return d->version;
}

void
art_curl_unload(void)
{
	if (loaded)
		art_curl.global_cleanup();
	loaded = false;
}
