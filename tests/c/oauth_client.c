/*
 * An MCP client in C that connects to an OAuth-protected HTTP server, for the official
 * conformance suite (scripts/test-c.sh runs it as
 * `conformance client --command oauth_client --scenario auth/metadata-default`):
 *
 *   oauth_client SERVER_URL
 *
 * - The authorization handler plays the user's browser headlessly: the suite's
 *   authorization server approves at once, so one GET of the authorization URL, without
 *   following redirects, answers the redirect (its Location header) that a browser would
 *   have been sent to. The GET runs on a thread of its own, and the answer is given from
 *   there, later, as a GUI host would.
 * - The tokens live in a token store kept by this program (memory, behind a mutex).
 * - It connects, lists and calls the server's tools, then logs out.
 *
 * Prints "oauth_client: ok ..." and exits 0 when the flow went as expected: one
 * authorization, tokens saved and loaded through the store, cleared by the logout.
 * OAUTH_CLIENT_REPORT (optional) names a file that receives the same last line.
 */
#define _POSIX_C_SOURCE 200809L

#include "mcpmux.h"

#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- a few JSON helpers (the library's JSON is compact, as serde_json writes it) ---- */

/* The end of the JSON value starting at `p` (just past it), or NULL. */
static const char *json_value_end(const char *p) {
    int depth = 0, in_string = 0;
    for (; *p; p++) {
        if (in_string) {
            if (*p == '\\' && p[1]) {
                p++;
            } else if (*p == '"') {
                in_string = 0;
                if (depth == 0) {
                    return p + 1;
                }
            }
        } else if (*p == '"') {
            in_string = 1;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            if (--depth == 0) {
                return p + 1;
            }
            if (depth < 0) {
                return p;
            }
        } else if (depth == 0 && (*p == ',')) {
            return p;
        }
    }
    return depth == 0 && !in_string ? p : NULL;
}

/* A copy (malloc) of the raw JSON value of top-level `key` in the object `json`, or NULL.
 * Good enough for the library's own objects: the key is searched as "key": text. */
static char *json_member(const char *json, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *start = strstr(json, pattern);
    if (!start) {
        return NULL;
    }
    start += strlen(pattern);
    const char *end = json_value_end(start);
    if (!end) {
        return NULL;
    }
    size_t n = (size_t)(end - start);
    char *copy = malloc(n + 1);
    if (copy) {
        memcpy(copy, start, n);
        copy[n] = 0;
    }
    return copy;
}

/* Decodes a JSON string literal in place (escapes other than \uXXXX); 0 on failure. */
static int json_unquote(char *s) {
    size_t n = strlen(s);
    if (n < 2 || s[0] != '"' || s[n - 1] != '"') {
        return 0;
    }
    char *out = s;
    for (char *p = s + 1; p < s + n - 1; p++) {
        if (*p == '\\') {
            p++;
            switch (*p) {
            case 'n': *out++ = '\n'; break;
            case 't': *out++ = '\t'; break;
            case '"': case '\\': case '/': *out++ = *p; break;
            default: return 0;
            }
        } else {
            *out++ = *p;
        }
    }
    *out = 0;
    return 1;
}

/* `text` as a JSON string literal (malloc). */
static char *json_quote(const char *text) {
    size_t n = strlen(text);
    char *out = malloc(2 * n + 3), *o = out;
    if (!out) {
        return NULL;
    }
    *o++ = '"';
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\') {
            *o++ = '\\';
        }
        *o++ = *p;
    }
    *o++ = '"';
    *o = 0;
    return out;
}

/* ---- the headless "browser": one HTTP GET, no redirects followed ---- */

/* GETs an http:// URL and copies its Location header into `location`; 0 on failure. */
static int http_location(const char *url, char *location, size_t n, char *why, size_t why_n) {
    char host[256], port[16] = "80";
    const char *rest;
    if (strncmp(url, "http://", 7) != 0) {
        snprintf(why, why_n, "not an http:// URL: %s", url);
        return 0;
    }
    const char *h = url + 7;
    size_t hl = strcspn(h, ":/?#");
    if (hl == 0 || hl >= sizeof host) {
        snprintf(why, why_n, "no host in %s", url);
        return 0;
    }
    memcpy(host, h, hl);
    host[hl] = 0;
    rest = h + hl;
    if (*rest == ':') {
        size_t pl = strcspn(rest + 1, "/?#");
        if (pl == 0 || pl >= sizeof port) {
            snprintf(why, why_n, "bad port in %s", url);
            return 0;
        }
        memcpy(port, rest + 1, pl);
        port[pl] = 0;
        rest += 1 + pl;
    }
    /* The path and query, without any fragment. */
    const char *slash = *rest == '/' ? "" : "/";
    int path_n = (int)strcspn(rest, "#");
    struct addrinfo hints = {0}, *addrs = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, port, &hints, &addrs);
    if (rc != 0) {
        snprintf(why, why_n, "cannot resolve %s: %s", host, gai_strerror(rc));
        return 0;
    }
    int fd = -1;
    for (struct addrinfo *a = addrs; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            break;
        }
        if (fd >= 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(addrs);
    if (fd < 0) {
        snprintf(why, why_n, "cannot connect to %s:%s", host, port);
        return 0;
    }
    size_t req_n = strlen(rest) + strlen(host) + 128;
    char *req = malloc(req_n);
    if (!req) {
        close(fd);
        snprintf(why, why_n, "out of memory");
        return 0;
    }
    int len = snprintf(req, req_n,
                       "GET %s%.*s HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n",
                       slash, path_n, rest, host, port);
    int ok = 1;
    for (int sent = 0; ok && sent < len;) {
        ssize_t w = write(fd, req + sent, (size_t)(len - sent));
        if (w <= 0) {
            ok = 0;
        } else {
            sent += (int)w;
        }
    }
    free(req);
    char buf[16384];
    size_t got = 0;
    while (ok && got < sizeof buf - 1) {
        ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
        if (r <= 0) {
            break;
        }
        got += (size_t)r;
        buf[got] = 0;
        if (strstr(buf, "\r\n\r\n")) {
            break; /* the headers are all we need */
        }
    }
    close(fd);
    buf[got] = 0;
    if (!ok || got == 0) {
        snprintf(why, why_n, "no answer from %s:%s", host, port);
        return 0;
    }
    for (char *line = strstr(buf, "\r\n"); line && line[2] && !(line[2] == '\r');
         line = strstr(line + 2, "\r\n")) {
        char *field = line + 2;
        if (strncasecmp(field, "location:", 9) == 0) {
            char *v = field + 9;
            while (*v == ' ' || *v == '\t') {
                v++;
            }
            size_t vl = strcspn(v, "\r\n");
            if (vl >= n) {
                break;
            }
            memcpy(location, v, vl);
            location[vl] = 0;
            return 1;
        }
    }
    snprintf(why, why_n, "no Location header: %.60s", buf);
    return 0;
}

/* ---- the authorization handler ---- */

static atomic_int prompts;

typedef struct {
    mcpmux_host_request_id request;
    char *authorization_url;
} authorization;

static void *authorize_later(void *arg) {
    authorization *a = arg;
    char location[4096], why[256];
    if (http_location(a->authorization_url, location, sizeof location, why, sizeof why)) {
        char *answer = json_quote(location);
        mcpmux_status s = mcpmux_host_request_respond(a->request, answer);
        if (s != MCPMUX_OK) {
            fprintf(stderr, "oauth_client: the redirect was refused: %s\n",
                    mcpmux_status_name(s));
        }
        free(answer);
    } else {
        mcpmux_host_request_refuse(a->request, why);
    }
    free(a->authorization_url);
    free(a);
    return NULL;
}

static void on_authorize(void *user_data, mcpmux_host_request_id request, const char *json,
                         size_t len) {
    (void)user_data;
    (void)len;
    atomic_fetch_add(&prompts, 1);
    authorization *a = calloc(1, sizeof *a);
    a->request = request;
    a->authorization_url = json_member(json, "authorizationUrl");
    if (!a->authorization_url || !json_unquote(a->authorization_url)) {
        mcpmux_host_request_refuse(request, "no authorizationUrl in the prompt");
        free(a->authorization_url);
        free(a);
        return;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, authorize_later, a) == 0) {
        pthread_detach(t);
    } else {
        authorize_later(a);
    }
}

/* ---- the token store: one server's credentials in memory ---- */

typedef struct {
    pthread_mutex_t mu;
    char *credentials; /* JSON, or NULL */
    int loads, loads_found, saves, clears, freed;
} token_store;

static void store_load(void *user_data, mcpmux_host_request_id request, const char *json,
                       size_t len) {
    (void)json;
    (void)len;
    token_store *s = user_data;
    pthread_mutex_lock(&s->mu);
    s->loads++;
    s->loads_found += s->credentials != NULL;
    mcpmux_host_request_respond(request, s->credentials ? s->credentials : "null");
    pthread_mutex_unlock(&s->mu);
}

static void store_save(void *user_data, mcpmux_host_request_id request, const char *json,
                       size_t len) {
    (void)len;
    token_store *s = user_data;
    char *credentials = json_member(json, "credentials");
    if (!credentials) {
        mcpmux_host_request_refuse(request, "no credentials to save");
        return;
    }
    pthread_mutex_lock(&s->mu);
    s->saves++;
    free(s->credentials);
    s->credentials = credentials;
    pthread_mutex_unlock(&s->mu);
    mcpmux_host_request_respond(request, "null");
}

static void store_clear(void *user_data, mcpmux_host_request_id request, const char *json,
                        size_t len) {
    (void)json;
    (void)len;
    token_store *s = user_data;
    pthread_mutex_lock(&s->mu);
    s->clears++;
    free(s->credentials);
    s->credentials = NULL;
    pthread_mutex_unlock(&s->mu);
    mcpmux_host_request_respond(request, "null");
}

static void store_free(void *user_data) {
    token_store *s = user_data;
    pthread_mutex_lock(&s->mu);
    s->freed++;
    pthread_mutex_unlock(&s->mu);
}

/* ---- main ---- */

static int fail(const char *what, mcpmux_status status) {
    char message[1024];
    mcpmux_last_error_message(message, sizeof message, NULL);
    fprintf(stderr, "oauth_client: %s failed: %s: %s\n", what, mcpmux_status_name(status),
            message);
    return 1;
}

static void report(const char *line) {
    printf("%s\n", line);
    fflush(stdout);
    const char *path = getenv("OAUTH_CLIENT_REPORT");
    if (path) {
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%s\n", line);
            fclose(f);
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s SERVER_URL\n", argv[0]);
        return 2;
    }
    const char *url = argv[1];
    char dir[] = "/tmp/mcpmux-oauth-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char options[512], config[300];
    snprintf(config, sizeof config, "%s/servers.json", dir);
    snprintf(options, sizeof options,
             "{\"configPath\": \"%s\", \"connectOnAdd\": false, \"healthCheckIntervalMs\": 0}",
             config);
    static token_store store = {.mu = PTHREAD_MUTEX_INITIALIZER};
    mcpmux_pool pool;
    mcpmux_status s = mcpmux_pool_open(options, &pool);
    if (s != MCPMUX_OK) {
        return fail("mcpmux_pool_open", s);
    }
    int rc = 0;
    char *json = NULL, *tools = NULL;
    s = mcpmux_pool_set_oauth_handler(pool, "http://localhost:3000/callback", on_authorize, NULL,
                                      NULL);
    if (s != MCPMUX_OK) {
        rc = fail("mcpmux_pool_set_oauth_handler", s);
        goto out;
    }
    s = mcpmux_pool_set_token_store(pool, store_load, store_save, store_clear, &store,
                                    store_free);
    if (s != MCPMUX_OK) {
        rc = fail("mcpmux_pool_set_token_store", s);
        goto out;
    }
    char *quoted_url = json_quote(url);
    size_t input_n = strlen(quoted_url) + 512;
    char *input = malloc(input_n);
    snprintf(input, input_n,
             "{\"name\": \"server\", \"type\": \"http\", \"isTrusted\": true, "
             "\"timeouts\": {\"connectMs\": 120000}, \"config\": "
             "{\"url\": %s, \"strictTransport\": true, \"oauth\": {\"clientMetadataUrl\": "
             "\"https://conformance-test.local/client-metadata.json\"}}}",
             quoted_url);
    free(quoted_url);
    s = mcpmux_servers_add(pool, input, &json);
    free(input);
    mcpmux_string_free(json);
    if (s != MCPMUX_OK) {
        rc = fail("mcpmux_servers_add", s);
        goto out;
    }
    s = mcpmux_servers_connect(pool, "server", 150000, &json);
    mcpmux_string_free(json);
    if (s != MCPMUX_OK) {
        rc = fail("mcpmux_servers_connect", s);
        goto out;
    }
    s = mcpmux_tools_list(pool, "server", NULL, 30000, &tools);
    if (s != MCPMUX_OK) {
        rc = fail("mcpmux_tools_list", s);
        goto out;
    }
    /* Calls each tool with no arguments (the OAuth scenarios' tools take none). */
    int calls = 0;
    for (const char *p = tools; (p = strstr(p, "\"id\":\"")) != NULL;) {
        p += 6;
        size_t n = strcspn(p, "\"");
        char id[256];
        if (n < sizeof id) {
            memcpy(id, p, n);
            id[n] = 0;
            s = mcpmux_tools_call(pool, id, "{}", NULL, 30000, &json);
            mcpmux_string_free(json);
            if (s != MCPMUX_OK) {
                rc = fail("mcpmux_tools_call", s);
                goto out;
            }
            calls++;
        }
        p += n;
    }
    s = mcpmux_pool_logout(pool, "server", 30000);
    if (s != MCPMUX_OK) {
        rc = fail("mcpmux_pool_logout", s);
        goto out;
    }
    pthread_mutex_lock(&store.mu);
    char line[256];
    /* One authorization; the tokens saved, read back from the store, cleared by logout. */
    int good = atomic_load(&prompts) == 1 && store.saves >= 1 && store.loads_found >= 1 &&
               store.clears == 1 && store.credentials == NULL;
    snprintf(line, sizeof line,
             "oauth_client: %s (authorizations %d, loads %d (%d with tokens), saves %d, "
             "clears %d, tool calls %d)",
             good ? "ok" : "FAILED", atomic_load(&prompts), store.loads, store.loads_found,
             store.saves, store.clears, calls);
    pthread_mutex_unlock(&store.mu);
    report(line);
    rc = good ? 0 : 1;
out:
    mcpmux_string_free(tools);
    mcpmux_pool_close(pool, -1);
    /* After a clean run nothing holds the store any more (a failed connect may still be
     * winding down in the background). */
    if (rc == 0 && store.freed != 1) {
        fprintf(stderr, "oauth_client: the store's user data was freed %d times\n", store.freed);
        rc = 1;
    }
    free(store.credentials);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "oauth_client: could not remove %s\n", dir);
    }
    return rc;
}
