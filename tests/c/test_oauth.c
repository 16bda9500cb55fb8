/* OAuth: the authorization handler, token stores, logout (the full round trip against an
 * authorization server runs in tests/c/oauth_client.c under the conformance suite). */
#include "harness.h"

#include <sys/stat.h>

static void on_authorize_unused(void *user_data, mcpmux_host_request_id request,
                                const char *json, size_t len) {
    (void)user_data;
    (void)json;
    (void)len;
    mcpmux_host_request_refuse(request, "not in this test");
}

void test_oauth_handler(void) {
    static host_log l;
    memset(&l, 0, sizeof l);
    const char *uri = "http://localhost:3000/callback";
    CHECK_STATUS(mcpmux_pool_set_oauth_handler(0, uri, on_authorize_unused, &l, on_host_free),
                 MCPMUX_ERR_INVALID_HANDLE);
    mcpmux_pool pool = open_pool();
    /* Bad arguments: a clear status, and the user data stays the caller's. */
    CHECK_STATUS(mcpmux_pool_set_oauth_handler(pool, NULL, on_authorize_unused, &l, on_host_free),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_set_oauth_handler(pool, "localhost/callback", on_authorize_unused,
                                               &l, on_host_free),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    char message[256];
    mcpmux_last_error_message(message, sizeof message, NULL);
    CHECK_CONTAINS(message, "redirect_uri");
    CHECK_STATUS(mcpmux_pool_set_oauth_handler(pool, "http://x/\xff", on_authorize_unused, &l,
                                               on_host_free),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(atomic_load(&l.freed) == 0);
    /* Replacing frees the old user data; NULL restores the browser flow (the redirect URI
     * and user data are then ignored). */
    CHECK_STATUS(mcpmux_pool_set_oauth_handler(pool, uri, on_authorize_unused, &l, on_host_free),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_set_oauth_handler(pool, "com.example.app:/oauth", on_authorize_unused,
                                               &l, on_host_free),
                 MCPMUX_OK);
    CHECK(atomic_load(&l.freed) == 1);
    CHECK_STATUS(mcpmux_pool_set_oauth_handler(pool, NULL, NULL, NULL, NULL), MCPMUX_OK);
    CHECK(atomic_load(&l.freed) == 2);
    CHECK_STATUS(mcpmux_pool_set_oauth_handler(pool, uri, on_authorize_unused, &l, on_host_free),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK(atomic_load(&l.freed) == 3);
    CHECK_STATUS(mcpmux_pool_set_oauth_handler(pool, NULL, NULL, NULL, NULL),
                 MCPMUX_ERR_INVALID_HANDLE);
}

/* A token store kept by the test: counts each operation and answers as told. */
typedef struct {
    pthread_mutex_t mu;
    atomic_int loads, saves, clears, freed;
    mcpmux_status bad_answer, good_answer;
    const char *refuse_load, *refuse_clear; /* a reason, or NULL to answer */
    char last_load[256], last_clear[256];
} store_log;

static void on_store_load(void *user_data, mcpmux_host_request_id request, const char *json,
                          size_t len) {
    store_log *s = user_data;
    pthread_mutex_lock(&s->mu);
    snprintf(s->last_load, sizeof s->last_load, "%.*s", (int)len, json);
    pthread_mutex_unlock(&s->mu);
    atomic_fetch_add(&s->loads, 1);
    if (s->refuse_load) {
        mcpmux_host_request_refuse(request, s->refuse_load);
        return;
    }
    /* Not JSON: refused, and the request still waits for a good answer. */
    s->bad_answer = mcpmux_host_request_respond(request, "{not json");
    s->good_answer = mcpmux_host_request_respond(request, "null");
}

static void on_store_save(void *user_data, mcpmux_host_request_id request, const char *json,
                          size_t len) {
    (void)json;
    (void)len;
    store_log *s = user_data;
    atomic_fetch_add(&s->saves, 1);
    mcpmux_host_request_respond(request, "null");
}

static void on_store_clear(void *user_data, mcpmux_host_request_id request, const char *json,
                           size_t len) {
    store_log *s = user_data;
    pthread_mutex_lock(&s->mu);
    snprintf(s->last_clear, sizeof s->last_clear, "%.*s", (int)len, json);
    pthread_mutex_unlock(&s->mu);
    atomic_fetch_add(&s->clears, 1);
    if (s->refuse_clear) {
        mcpmux_host_request_refuse(request, s->refuse_clear);
    } else {
        mcpmux_host_request_respond(request, "null");
    }
}

static void on_store_free(void *user_data) {
    store_log *s = user_data;
    atomic_fetch_add(&s->freed, 1);
}

/* An HTTP server nobody listens for: connecting reads its stored tokens, then fails (at
 * once: strictTransport tries no other transport). */
static void add_unreachable_http(mcpmux_pool pool) {
    char *out = NULL;
    CHECK_STATUS(mcpmux_servers_add(pool,
                                    "{\"name\": \"remote\", \"config\": {\"url\": "
                                    "\"http://127.0.0.1:9/mcp\", \"strictTransport\": true}}",
                                    &out),
                 MCPMUX_OK);
    mcpmux_string_free(out);
}

void test_oauth_token_store(void) {
    static store_log s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.mu, NULL);
    mcpmux_pool pool = open_pool();
    CHECK_STATUS(mcpmux_pool_set_token_store(0, on_store_load, on_store_save, on_store_clear, &s,
                                             on_store_free),
                 MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_pool_set_token_store(pool, NULL, on_store_save, on_store_clear, &s,
                                             on_store_free),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_set_token_store(pool, on_store_load, on_store_save, NULL, &s,
                                             on_store_free),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK(atomic_load(&s.freed) == 0);
    CHECK_STATUS(mcpmux_pool_set_token_store(pool, on_store_load, on_store_save, on_store_clear,
                                             &s, on_store_free),
                 MCPMUX_OK);
    add_unreachable_http(pool);

    /* Connecting asks the store for the server's tokens first. */
    char *out = NULL;
    CHECK_STATUS(mcpmux_servers_connect(pool, "remote", 60000, &out), MCPMUX_ERR_CONNECTION);
    CHECK(out == NULL);
    CHECK(atomic_load(&s.loads) >= 1);
    CHECK_STATUS(s.bad_answer, MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(s.good_answer, MCPMUX_OK);
    CHECK_CONTAINS(s.last_load, "\"serverId\":\"");

    /* A store that cannot load fails the connection with its reason. */
    s.refuse_load = "vault locked";
    CHECK_STATUS(mcpmux_servers_connect(pool, "remote", 60000, &out), MCPMUX_ERR_CONNECTION);
    char message[512];
    mcpmux_last_error_message(message, sizeof message, NULL);
    CHECK_CONTAINS(message, "vault locked");

    /* Logout clears the server's tokens (by id) and disconnects it. */
    CHECK_STATUS(mcpmux_pool_logout(pool, "remote", 60000), MCPMUX_OK);
    CHECK(atomic_load(&s.clears) == 1);
    CHECK(strcmp(s.last_clear, s.last_load) == 0);
    s.refuse_clear = "read-only vault";
    CHECK_STATUS(mcpmux_pool_logout(pool, "remote", 60000), MCPMUX_ERR_CONNECTION);
    mcpmux_last_error_message(message, sizeof message, NULL);
    CHECK_CONTAINS(message, "read-only vault");
    s.refuse_clear = NULL;
    waiter w;
    waiter_init(&w);
    mcpmux_request_id id = 0;
    AWAIT(&w, mcpmux_pool_logout_async(pool, "remote", 60000, on_complete, &w, &id));
    CHECK_STATUS(w.status, MCPMUX_OK);
    CHECK(w.json && strcmp(w.json, "null") == 0);
    CHECK(id != 0);
    waiter_destroy(&w);
    CHECK(atomic_load(&s.clears) == 3);
    CHECK(atomic_load(&s.saves) == 0);

    /* Bad arguments. */
    CHECK_STATUS(mcpmux_pool_logout(pool, NULL, 0), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_logout(pool, "no-such-server", 0), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_pool_logout(0, "remote", 0), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_pool_logout_async(pool, "remote", 0, NULL, NULL, &id),
                 MCPMUX_ERR_NULL_ARGUMENT);

    /* Another store replaces this one: its user data is freed, once. */
    CHECK_STATUS(mcpmux_pool_set_token_store_memory(pool), MCPMUX_OK);
    CHECK(atomic_load(&s.freed) == 1);
    CHECK_STATUS(mcpmux_pool_logout(pool, "remote", 60000), MCPMUX_OK);
    CHECK(atomic_load(&s.clears) == 3);
    /* Closing the pool frees a store's user data too. */
    CHECK_STATUS(mcpmux_pool_set_token_store(pool, on_store_load, on_store_save, on_store_clear,
                                             &s, on_store_free),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK(atomic_load(&s.freed) == 2);
    CHECK_STATUS(mcpmux_pool_set_token_store_memory(pool), MCPMUX_ERR_INVALID_HANDLE);
    pthread_mutex_destroy(&s.mu);
}

void test_oauth_token_file(void) {
    char config[320], opts[512], tokens[400];
    config_path(config, sizeof config);
    snprintf(opts, sizeof opts,
             "{\"configPath\": \"%s\", \"healthCheckIntervalMs\": 0, \"connectOnAdd\": false}",
             config);
    mcpmux_pool pool = 0;
    CHECK_STATUS(mcpmux_pool_open(opts, &pool), MCPMUX_OK);
    add_unreachable_http(pool);
    CHECK_STATUS(mcpmux_pool_set_token_store_file(pool, ""), MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_set_token_store_file(pool, "\xff"), MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_set_token_store_file(0, NULL), MCPMUX_ERR_INVALID_HANDLE);

    /* A file of the host's choosing, created 0600 when first written. */
    snprintf(tokens, sizeof tokens, "%s/chosen-tokens.json", tmp_root);
    CHECK_STATUS(mcpmux_pool_set_token_store_file(pool, tokens), MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_logout(pool, "remote", 60000), MCPMUX_OK);
    struct stat st;
    CHECK(stat(tokens, &st) == 0 && (st.st_mode & 0777) == 0600);

    /* NULL: the default file beside the config. */
    snprintf(tokens, sizeof tokens, "%s.tokens.json", config);
    CHECK(stat(tokens, &st) != 0);
    CHECK_STATUS(mcpmux_pool_set_token_store_file(pool, NULL), MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_logout(pool, "remote", 60000), MCPMUX_OK);
    CHECK(stat(tokens, &st) == 0 && (st.st_mode & 0777) == 0600);

    /* A corrupt token file is an error, never replaced. */
    FILE *f = fopen(tokens, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("{oops", f);
        fclose(f);
    }
    char *out = NULL;
    CHECK_STATUS(mcpmux_servers_connect(pool, "remote", 60000, &out), MCPMUX_ERR_CONNECTION);
    char message[512];
    mcpmux_last_error_message(message, sizeof message, NULL);
    CHECK_CONTAINS(message, "token");
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}
