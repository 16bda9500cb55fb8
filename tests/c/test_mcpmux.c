/*
 * C tests of libmcpmux against real MCP servers.
 *
 * Environment (set by scripts/test-c.sh):
 *   MCPMUX_TEST_SERVER      path of the mcpmux-test-server binary (required)
 *   MCPMUX_EVERYTHING_JS    entry script of @modelcontextprotocol/server-everything
 *                           (its tests are skipped without it, unless
 *                           MCPMUX_REQUIRE_SERVERS=1 turns the skip into a failure)
 *   MCPMUX_FAKE_LLM         path of the mcpmux-fake-llm binary (the scripted model service)
 *   MCPMUX_SKILLS_PYTHON, MCPMUX_SKILLS_SERVER  FastMCP's python and tests/servers/fastmcp_skills_server.py
 *   MCPMUX_TASKS_SERVER     tests/servers/fastmcp_tasks_server.py (run by MCPMUX_SKILLS_PYTHON)
 *   MCPMUX_CONTRACT_TABLE   tests/contract/host_answers.json as lines of
 *                           "kind<TAB>answer<TAB>accepted or REFUSED:kind<TAB>says"
 *   MCPMUX_C_TEST_FILTER    run only tests whose name contains this text
 *
 * Prints one line per test and closes with "N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L

#include "mcpmux.h"

#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------- */
/* A tiny harness: a failed CHECK marks the current test failed and carries on.        */
/* ---------------------------------------------------------------------------------- */

static int current_failed;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            current_failed = 1;                                                        \
            char *why_ = mcpmux_last_error();                                          \
            fprintf(stderr, "  CHECK failed %s:%d: %s (last error: %s)\n", __FILE__,   \
                    __LINE__, #cond, why_ ? why_ : "none");                            \
            mcpmux_string_free(why_);                                                  \
        }                                                                              \
    } while (0)

#define CHECK_STATUS(expr, expected)                                                   \
    do {                                                                               \
        mcpmux_status got_ = (expr);                                                   \
        if (got_ != (expected)) {                                                      \
            current_failed = 1;                                                        \
            char *why_ = mcpmux_last_error();                                          \
            fprintf(stderr, "  %s:%d: %s gave %s, expected %s (last error: %s)\n",     \
                    __FILE__, __LINE__, #expr, mcpmux_status_name(got_),               \
                    mcpmux_status_name(expected), why_ ? why_ : "none");               \
            mcpmux_string_free(why_);                                                  \
        }                                                                              \
    } while (0)

#define CHECK_CONTAINS(haystack, needle)                                               \
    do {                                                                               \
        const char *h_ = (haystack);                                                   \
        if (!h_ || !strstr(h_, (needle))) {                                            \
            current_failed = 1;                                                        \
            fprintf(stderr, "  %s:%d: expected \"%s\" in: %.400s\n", __FILE__,         \
                    __LINE__, (needle), h_ ? h_ : "(null)");                           \
        }                                                                              \
    } while (0)

static int skipped;

static void skip(const char *why) {
    const char *req = getenv("MCPMUX_REQUIRE_SERVERS");
    if (req && strcmp(req, "1") == 0) {
        fprintf(stderr, "  required dependency missing: %s\n", why);
        current_failed = 1;
    } else {
        fprintf(stderr, "  SKIP: %s\n", why);
        skipped = 1;
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

/* ---------------------------------------------------------------------------------- */
/* Fixtures                                                                             */
/* ---------------------------------------------------------------------------------- */

static char tmp_root[256];
static int tmp_counter;

/* A fresh config file path in the run's temp folder. */
static void config_path(char *buf, size_t n) {
    snprintf(buf, n, "%s/servers-%d.json", tmp_root, ++tmp_counter);
}

/* Opens a pool over a fresh config with `extra` options (JSON members, may be ""); servers
 * connect only when used. */
static mcpmux_pool open_pool_with(const char *extra) {
    char path[320], opts[640];
    config_path(path, sizeof path);
    snprintf(opts, sizeof opts,
             "{\"configPath\": \"%s\", \"healthCheckIntervalMs\": 0, \"connectOnAdd\": false,"
             " \"shutdownTimeoutMs\": 2000%s%s}",
             path, *extra ? ", " : "", extra);
    mcpmux_pool pool = 0;
    CHECK_STATUS(mcpmux_pool_open(opts, &pool), MCPMUX_OK);
    CHECK(pool != 0);
    return pool;
}

static mcpmux_pool open_pool(void) { return open_pool_with(""); }

static const char *test_server(void) { return getenv("MCPMUX_TEST_SERVER"); }

/* Adds the test server under `name` (extra args as a JSON array body, may be ""). */
static int add_test_server(mcpmux_pool pool, const char *name, const char *args) {
    char input[1024];
    snprintf(input, sizeof input,
             "{\"name\": \"%s\", \"config\": {\"command\": \"%s\", \"args\": [%s]}}", name,
             test_server(), args);
    char *out = NULL;
    mcpmux_status s = mcpmux_servers_add(pool, input, &out);
    CHECK_STATUS(s, MCPMUX_OK);
    CHECK_CONTAINS(out, name);
    mcpmux_string_free(out);
    return s == MCPMUX_OK;
}

/* Waits for one completion callback and keeps what it received. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    mcpmux_status status;
    char *json;
} waiter;

static void waiter_init(waiter *w) {
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->done = 0;
    w->status = -1;
    w->json = NULL;
}

static void waiter_destroy(waiter *w) {
    free(w->json);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
}

static void on_complete(void *user_data, mcpmux_status status, const char *json, size_t len) {
    waiter *w = user_data;
    pthread_mutex_lock(&w->mu);
    w->status = status;
    w->json = malloc(len + 1);
    memcpy(w->json, json, len + 1);
    w->done++;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Returns 0 when no callback came within `ms`. */
static int waiter_wait(waiter *w, long ms) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += ms / 1000;
    deadline.tv_nsec += (ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if (pthread_cond_timedwait(&w->cv, &w->mu, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    int done = w->done;
    pthread_mutex_unlock(&w->mu);
    return done;
}

/* Runs an async call (already started with `w` as user data) to completion. */
#define AWAIT(w, call)                                                                 \
    do {                                                                               \
        CHECK_STATUS((call), MCPMUX_OK);                                               \
        CHECK(waiter_wait((w), 30000));                                                \
    } while (0)

/* ---------------------------------------------------------------------------------- */
/* Tests                                                                                */
/* ---------------------------------------------------------------------------------- */

static void test_version_and_status_names(void) {
    const char *v = mcpmux_version();
    CHECK(v != NULL && strlen(v) >= 5);
    /* The header and the library come from the same release, and the macros agree. */
    CHECK(strcmp(v, MCPMUX_VERSION) == 0);
    char parts[32];
    snprintf(parts, sizeof parts, "%d.%d.%d", MCPMUX_VERSION_MAJOR, MCPMUX_VERSION_MINOR,
             MCPMUX_VERSION_PATCH);
    CHECK(strcmp(parts, MCPMUX_VERSION) == 0);
    CHECK(MCPMUX_VERSION_NUMBER == MCPMUX_VERSION_MAJOR * 10000 + MCPMUX_VERSION_MINOR * 100 +
                                       MCPMUX_VERSION_PATCH);
#if MCPMUX_VERSION_NUMBER < 100
#error "MCPMUX_VERSION_NUMBER is usable in #if and says 0.1.0 or later"
#endif
    CHECK(strcmp(mcpmux_status_name(MCPMUX_OK), "ok") == 0);
    CHECK(strcmp(mcpmux_status_name(MCPMUX_ERR_TIMEOUT), "timeout") == 0);
    CHECK(strcmp(mcpmux_status_name(MCPMUX_ERR_INVALID_HANDLE), "invalid_handle") == 0);
    CHECK(strcmp(mcpmux_status_name(MCPMUX_ERR_BUFFER_TOO_SMALL), "buffer_too_small") == 0);
    CHECK(strcmp(mcpmux_status_name(MCPMUX_ERR_MESSAGE_TOO_LARGE), "message_too_large") == 0);
    CHECK(MCPMUX_ERR_MESSAGE_TOO_LARGE == 15);
    CHECK(strcmp(mcpmux_status_name(MCPMUX_ERR_URL_ELICITATION_REQUIRED),
                 "url_elicitation_required") == 0);
    CHECK(MCPMUX_ERR_URL_ELICITATION_REQUIRED == 16);
    CHECK(strcmp(mcpmux_status_name(-1), "unknown") == 0);
    CHECK(strcmp(mcpmux_status_name(1000), "unknown") == 0);
    /* The numbers are part of the ABI. */
    CHECK(MCPMUX_ERR_INVALID_ARGUMENT == 1 && MCPMUX_ERR_PANIC == 12);
}

static void test_last_error_message(void) {
    /* A thread that never failed has no message. */
    CHECK_STATUS(mcpmux_last_error_status(), MCPMUX_OK);
    char buf[8] = "xxxxxxx";
    size_t len = 99;
    CHECK_STATUS(mcpmux_last_error_message(buf, sizeof buf, &len), MCPMUX_ERR_NOT_FOUND);
    CHECK(len == 0 && buf[0] == '\0');
    CHECK(mcpmux_last_error() == NULL);

    mcpmux_pool pool = 0;
    CHECK_STATUS(mcpmux_pool_open("{\"requestTimeoutMs\": \"soon\"}", &pool),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(pool == 0);
    CHECK_STATUS(mcpmux_last_error_status(), MCPMUX_ERR_INVALID_ARGUMENT);
    char *full = mcpmux_last_error();
    CHECK_CONTAINS(full, "options_json");
    size_t full_len = full ? strlen(full) : 0;

    /* Asking for the size, then a buffer too small, then one that fits exactly. */
    CHECK_STATUS(mcpmux_last_error_message(NULL, 0, &len), MCPMUX_ERR_BUFFER_TOO_SMALL);
    CHECK(len == full_len);
    CHECK_STATUS(mcpmux_last_error_message(buf, sizeof buf, &len), MCPMUX_ERR_BUFFER_TOO_SMALL);
    CHECK(strlen(buf) == sizeof buf - 1 && full && strncmp(buf, full, sizeof buf - 1) == 0);
    char *exact = malloc(full_len + 1);
    CHECK_STATUS(mcpmux_last_error_message(exact, full_len + 1, NULL), MCPMUX_OK);
    CHECK(full && strcmp(exact, full) == 0);
    free(exact);
    mcpmux_string_free(full);
    mcpmux_string_free(NULL);
}

static void test_null_arguments(void) {
    mcpmux_pool pool = open_pool();
    char *out = (char *)"untouched";
    mcpmux_request_id rid = 0;
    mcpmux_subscription_id sid = 0;
    waiter w;
    waiter_init(&w);

    CHECK_STATUS(mcpmux_pool_open(NULL, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    char *msg = mcpmux_last_error();
    CHECK_CONTAINS(msg, "out_pool");
    mcpmux_string_free(msg);
    CHECK_STATUS(mcpmux_pool_in_flight(pool, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_list(pool, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_states(pool, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_get(pool, NULL, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK(out == NULL);
    msg = mcpmux_last_error();
    CHECK_CONTAINS(msg, "server is NULL");
    mcpmux_string_free(msg);
    CHECK_STATUS(mcpmux_servers_get(pool, "x", NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_add(pool, NULL, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_add_json(pool, NULL, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_update(pool, NULL, "{}", &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_update(pool, "x", NULL, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_remove(pool, NULL, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_test(pool, NULL, 0, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_test_config(pool, NULL, 0, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_discover(pool, NULL, 0, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_connect(pool, NULL, 0, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_disconnect(pool, NULL, 0), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_list(pool, NULL, NULL, 0, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_call(pool, NULL, "{}", NULL, 0, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_call(pool, "t", "{}", NULL, 0, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_resources_list(pool, NULL, NULL, 0, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_resources_templates(pool, NULL, NULL, 0, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_resources_read(pool, NULL, "u", 0, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_resources_read(pool, "s", NULL, 0, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_resources_subscribe(pool, NULL, "u", 0), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_resources_unsubscribe(pool, "s", NULL, 0), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_prompts_list(pool, NULL, NULL, 0, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_prompts_get(pool, "s", NULL, NULL, 0, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_prompts_get(pool, NULL, "p", NULL, 0, &out), MCPMUX_ERR_NULL_ARGUMENT);

    /* Async calls: a NULL callback or a NULL required argument fails at once and the
     * callback is never called. */
    CHECK_STATUS(mcpmux_tools_list_async(pool, NULL, NULL, 0, NULL, &w, &rid), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_call_async(pool, NULL, NULL, NULL, 0, NULL, on_complete, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_test_async(pool, NULL, 0, on_complete, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_test_config_async(pool, NULL, 0, on_complete, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_discover_async(pool, NULL, 0, on_complete, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_connect_async(pool, NULL, 0, on_complete, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_disconnect_async(pool, NULL, 0, on_complete, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_resources_list_async(pool, NULL, NULL, 0, NULL, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_resources_templates_async(pool, NULL, NULL, 0, NULL, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_resources_read_async(pool, NULL, "u", 0, on_complete, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_resources_subscribe_async(pool, "s", NULL, 0, on_complete, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_resources_unsubscribe_async(pool, NULL, "u", 0, on_complete, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_prompts_list_async(pool, NULL, NULL, 0, NULL, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_prompts_get_async(pool, "s", NULL, NULL, 0, on_complete, &w, &rid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_events_subscribe(pool, NULL, NULL, &w, NULL, &sid),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_events_subscribe(pool, NULL, (mcpmux_event_fn)0, NULL, NULL, NULL),
                 MCPMUX_ERR_NULL_ARGUMENT);
    sleep_ms(50);
    CHECK(w.done == 0);

    /* NULL for an optional argument is fine: the async request id is optional. */
    CHECK_STATUS(mcpmux_servers_states(pool, &out), MCPMUX_OK);
    CHECK(out && strcmp(out, "[]") == 0);
    mcpmux_string_free(out);
    AWAIT(&w, mcpmux_tools_list_async(pool, NULL, NULL, 0, on_complete, &w, NULL));
    CHECK_STATUS(w.status, MCPMUX_OK);
    CHECK(w.json && strcmp(w.json, "[]") == 0);
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

static void test_invalid_handles(void) {
    char *out = NULL;
    size_t n = 0;
    mcpmux_subscription_id sid = 0;
    mcpmux_pool bogus[] = {0, 1, 12345, (mcpmux_pool)-1, (mcpmux_pool)1 << 60};
    for (size_t i = 0; i < sizeof bogus / sizeof bogus[0]; i++) {
        CHECK_STATUS(mcpmux_servers_list(bogus[i], &out), MCPMUX_ERR_INVALID_HANDLE);
        CHECK(out == NULL);
        CHECK_STATUS(mcpmux_pool_close(bogus[i], 0), MCPMUX_ERR_INVALID_HANDLE);
    }

    mcpmux_pool pool = open_pool();
    CHECK_STATUS(mcpmux_pool_in_flight(pool, &n), MCPMUX_OK);
    CHECK(n == 0);
    CHECK_STATUS(mcpmux_pool_close(pool, -1), MCPMUX_OK);
    /* Closed: every function says so, a second close too. */
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_ERR_INVALID_HANDLE);
    char *msg = mcpmux_last_error();
    CHECK_CONTAINS(msg, "not open");
    mcpmux_string_free(msg);
    waiter w;
    waiter_init(&w);
    mcpmux_request_id rid = 0;
    CHECK_STATUS(mcpmux_pool_in_flight(pool, &n), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_servers_list(pool, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_servers_states(pool, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_servers_get(pool, "x", &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_servers_add(pool, "{}", &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_servers_add_json(pool, "{}", &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_servers_update(pool, "x", "{}", &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_servers_remove(pool, "x", &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_servers_test(pool, "x", 0, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_servers_disconnect(pool, "x", 0), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_tools_list(pool, NULL, NULL, 0, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_tools_call(pool, "t", NULL, NULL, 0, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_tools_call_async(pool, "t", NULL, NULL, 0, NULL, on_complete, &w, &rid),
                 MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_resources_list(pool, NULL, NULL, 0, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_resources_subscribe(pool, "s", "u", 0), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_prompts_list(pool, NULL, NULL, 0, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_events_subscribe(pool, NULL, (mcpmux_event_fn)0, NULL, NULL, &sid),
                 MCPMUX_ERR_INVALID_HANDLE);
    CHECK(out == NULL);

    /* A new pool may reuse the slot, but never the handle. */
    mcpmux_pool again = open_pool();
    CHECK(again != pool);
    CHECK_STATUS(mcpmux_servers_list(pool, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_servers_list(again, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_pool_close(again, 0), MCPMUX_OK);
    sleep_ms(20);
    CHECK(w.done == 0);
    waiter_destroy(&w);
}

static void test_invalid_json_and_utf8(void) {
    mcpmux_pool pool = 0;
    CHECK_STATUS(mcpmux_pool_open("{not json", &pool), MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_open("{\"noSuchOption\": 1}", &pool), MCPMUX_ERR_INVALID_ARGUMENT);
    char *msg = mcpmux_last_error();
    CHECK_CONTAINS(msg, "noSuchOption");
    mcpmux_string_free(msg);
    CHECK_STATUS(mcpmux_pool_open("{\"configPath\": \"\xff\xfe\"}", &pool),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    msg = mcpmux_last_error();
    CHECK_CONTAINS(msg, "UTF-8");
    mcpmux_string_free(msg);
    CHECK(pool == 0);

    /* A config file that is not JSON: its own status, and the file is left alone. */
    char path[320], opts[512];
    config_path(path, sizeof path);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("this is not a config", f);
        fclose(f);
    }
    snprintf(opts, sizeof opts, "{\"configPath\": \"%s\"}", path);
    CHECK_STATUS(mcpmux_pool_open(opts, &pool), MCPMUX_ERR_INVALID_CONFIG);
    msg = mcpmux_last_error();
    CHECK_CONTAINS(msg, path);
    mcpmux_string_free(msg);
    CHECK(pool == 0);

    pool = open_pool();
    char *out = NULL;
    CHECK_STATUS(mcpmux_servers_add(pool, "", &out), MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_add(pool, "[1, 2]", &out), MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_add(pool, "{\"name\": \"x\"}", &out), MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_add(pool, "{\"name\": \"bad\xc3\x28\", \"config\": {}}", &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    msg = mcpmux_last_error();
    CHECK_CONTAINS(msg, "input_json is not valid UTF-8");
    mcpmux_string_free(msg);
    CHECK_STATUS(mcpmux_servers_add_json(pool, "{\"mcpServers\": ", &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_get(pool, "\x80", &out), MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_servers_update(pool, "x", "{\"isActive\": \"yes\"}", &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__x__y", "{oops", NULL, 0, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_prompts_get(pool, "s", "p", "[\"not\", \"an\", \"object\"]", 0, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

static void test_servers_crud(void) {
    mcpmux_pool pool = open_pool();
    char *out = NULL;
    CHECK(add_test_server(pool, "alpha", ""));
    /* The same server again (a host adding it at every start) is the one saved. */
    CHECK(add_test_server(pool, "alpha", ""));
    /* Another server under the same name is refused, naming what differs. */
    CHECK_STATUS(mcpmux_servers_add(pool, "{\"name\": \"alpha\", \"config\": {\"command\": \"x\"}}",
                                    &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    char *why = mcpmux_last_error();
    CHECK_CONTAINS(why, "with another config.command");
    mcpmux_string_free(why);

    CHECK_STATUS(mcpmux_servers_list(pool, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"alpha\"");
    CHECK_CONTAINS(out, "\"type\":\"stdio\"");
    mcpmux_string_free(out);

    CHECK_STATUS(mcpmux_servers_get(pool, "alpha", &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"isActive\":true");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_servers_get(pool, "nobody", &out), MCPMUX_ERR_NOT_FOUND);

    CHECK_STATUS(mcpmux_servers_update(pool, "alpha", "{\"isActive\": false}", &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"isActive\":false");
    CHECK_CONTAINS(out, "\"updatedAt\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_servers_update(pool, "nobody", "{}", &out), MCPMUX_ERR_NOT_FOUND);

    /* One good and one bad entry: the bad one fails alone. */
    char text[1024];
    snprintf(text, sizeof text,
             "{\"mcpServers\": {\"beta\": {\"command\": \"%s\"}, \"gamma\": {\"args\": [1]}}}",
             test_server());
    CHECK_STATUS(mcpmux_servers_add_json(pool, text, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"beta\",\"success\":true");
    CHECK_CONTAINS(out, "\"name\":\"gamma\",\"success\":false");
    mcpmux_string_free(out);
    /* The same text again (an import run twice): beta is found there, not added. */
    CHECK_STATUS(mcpmux_servers_add_json(pool, text, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"alreadyThere\":true");
    mcpmux_string_free(out);

    CHECK_STATUS(mcpmux_servers_states(pool, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"beta\",\"state\":\"disconnected\"");
    mcpmux_string_free(out);

    CHECK_STATUS(mcpmux_servers_remove(pool, "beta", &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"beta\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_servers_remove(pool, "beta", &out), MCPMUX_ERR_NOT_FOUND);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_servers_list(pool, &out), MCPMUX_OK);
    CHECK(out && !strstr(out, "beta"));
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

static void test_server_operations(void) {
    mcpmux_pool pool = open_pool();
    char *out = NULL;
    waiter w;
    add_test_server(pool, "ops", "");

    CHECK_STATUS(mcpmux_servers_test(pool, "ops", 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"success\":true");
    CHECK_CONTAINS(out, "\"echo\"");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_servers_test_async(pool, "ops", 20000, on_complete, &w, NULL));
    CHECK_STATUS(w.status, MCPMUX_OK);
    CHECK_CONTAINS(w.json, "\"success\":true");
    waiter_destroy(&w);

    char input[512];
    snprintf(input, sizeof input, "{\"name\": \"tmp\", \"config\": {\"command\": \"%s\"}}",
             test_server());
    CHECK_STATUS(mcpmux_servers_test_config(pool, input, 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"success\":true");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_servers_test_config_async(
                  pool, "{\"name\": \"nope\", \"config\": {\"command\": \"/nonexistent/x\"}}",
                  20000, on_complete, &w, NULL));
    CHECK_STATUS(w.status, MCPMUX_OK);
    CHECK_CONTAINS(w.json, "\"success\":false");
    waiter_destroy(&w);

    CHECK_STATUS(mcpmux_servers_connect(pool, "ops", 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"state\":\"connected\"");
    CHECK_CONTAINS(out, "\"pid\":");
    /* What the server said of itself: who it is, how to use it, what it offers. */
    CHECK_CONTAINS(out, "\"instructions\":\"Test server for mcpmux; every tool is deterministic.\"");
    CHECK_CONTAINS(out, "\"serverInfo\":{\"name\":\"mcpmux-test-server\"");
    CHECK_CONTAINS(out, "\"capabilities\":{");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_servers_discover(pool, "ops", 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"tools\":[");
    CHECK_CONTAINS(out, "test://hello");
    CHECK_CONTAINS(out, "greet");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_servers_discover_async(pool, "ops", 20000, on_complete, &w, NULL));
    CHECK_CONTAINS(w.json, "\"prompts\":[");
    waiter_destroy(&w);

    CHECK_STATUS(mcpmux_servers_disconnect(pool, "ops", 5000), MCPMUX_OK);
    CHECK_STATUS(mcpmux_servers_states(pool, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"state\":\"disconnected\"");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_servers_connect_async(pool, "ops", 20000, on_complete, &w, NULL));
    CHECK_CONTAINS(w.json, "\"state\":\"connected\"");
    waiter_destroy(&w);
    waiter_init(&w);
    AWAIT(&w, mcpmux_servers_disconnect_async(pool, "ops", 5000, on_complete, &w, NULL));
    CHECK_STATUS(w.status, MCPMUX_OK);
    CHECK(w.json && strcmp(w.json, "null") == 0);
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_servers_connect(pool, "nobody", 0, &out), MCPMUX_ERR_NOT_FOUND);

    /* A server that never answers: the call's own timeout ends the wait. */
    add_test_server(pool, "hung", "\"--silent\"");
    double start = now_s();
    CHECK_STATUS(mcpmux_servers_connect(pool, "hung", 300, &out), MCPMUX_ERR_TIMEOUT);
    CHECK(now_s() - start < 5.0);
    CHECK(out == NULL);
    waiter_init(&w);
    AWAIT(&w, mcpmux_servers_discover_async(pool, "hung", 300, on_complete, &w, NULL));
    CHECK_STATUS(w.status, MCPMUX_ERR_TIMEOUT);
    CHECK_CONTAINS(w.json, "\"code\":\"timeout\"");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

static void test_tools(void) {
    mcpmux_pool pool = open_pool();
    char *out = NULL;
    waiter w;
    add_test_server(pool, "ts", "");

    CHECK_STATUS(mcpmux_tools_list(pool, NULL, NULL, 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"id\":\"mcp__ts__echo\"");
    CHECK_CONTAINS(out, "\"inputSchema\"");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_tools_list_async(pool, "ts", NULL, 20000, on_complete, &w, NULL));
    CHECK_CONTAINS(w.json, "mcp__ts__add");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_tools_list(pool, "nobody", NULL, 0, &out), MCPMUX_ERR_NOT_FOUND);

    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__ts__echo", "{\"text\": \"h\xc3\xa9llo\"}", NULL, 0, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "h\xc3\xa9llo");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__ts__add", "{\"a\": 2, \"b\": 40}", NULL, 0, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "42");
    mcpmux_string_free(out);
    /* A tool result with isError is a result, not a failure. */
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__ts__fail", NULL, NULL, 0, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"isError\":true");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__ts__structured", NULL, NULL, 0, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"structuredContent\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__ts__nope", NULL, NULL, 0, &out), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__ts__echo", "[1]", NULL, 0, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    /* Wrong arguments: rmcp servers answer with a tool error result, not a failure. */
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__ts__add", "{\"a\": \"x\"}", NULL, 0, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"isError\":true");
    mcpmux_string_free(out);

    waiter_init(&w);
    AWAIT(&w, mcpmux_tools_call_async(pool, "mcp__ts__echo", "{\"text\": \"async\"}", NULL, 0, NULL,
                                      on_complete, &w, NULL));
    CHECK_STATUS(w.status, MCPMUX_OK);
    CHECK_CONTAINS(w.json, "async");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

/* Progress of one call: its own callback, with the call's user data, never after the
 * completion. */
typedef struct {
    waiter w;
    atomic_int progress, after_done;
    char last[256];
} progress_log;

static void progress_log_init(progress_log *l) {
    memset(l, 0, sizeof *l);
    waiter_init(&l->w);
    atomic_init(&l->progress, 0);
    atomic_init(&l->after_done, 0);
}

static void on_progress(void *user_data, const char *json, size_t len) {
    progress_log *l = user_data;
    pthread_mutex_lock(&l->w.mu);
    if (l->w.done) {
        atomic_fetch_add(&l->after_done, 1);
    }
    if (len < sizeof l->last) {
        memcpy(l->last, json, len + 1);
    }
    pthread_mutex_unlock(&l->w.mu);
    atomic_fetch_add(&l->progress, 1);
}

static void on_progress_done(void *user_data, mcpmux_status status, const char *json,
                             size_t len) {
    progress_log *l = user_data;
    on_complete(&l->w, status, json, len);
}

static void test_progress(void) {
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "prog", "");
    static progress_log l;
    progress_log_init(&l);
    CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__prog__sleep", "{\"ms\": 600}", NULL, 0,
                                         on_progress, on_progress_done, &l, NULL),
                 MCPMUX_OK);
    CHECK(waiter_wait(&l.w, 20000));
    CHECK_STATUS(l.w.status, MCPMUX_OK);
    CHECK_CONTAINS(l.w.json, "slept");
    CHECK(atomic_load(&l.progress) >= 3);
    CHECK_CONTAINS(l.last, "\"total\":600");
    CHECK_CONTAINS(l.last, "\"message\":\"slept ");
    sleep_ms(200);
    CHECK(atomic_load(&l.after_done) == 0);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    waiter_destroy(&l.w);
}

static void test_cancel(void) {
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "slow", "");
    waiter w;
    waiter_init(&w);
    mcpmux_request_id id = 0;
    double start = now_s();
    CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__slow__sleep", "{\"ms\": 20000}", NULL, 0, NULL,
                                         on_complete, &w, &id),
                 MCPMUX_OK);
    CHECK(id != 0);
    sleep_ms(300);
    size_t n = 0;
    CHECK_STATUS(mcpmux_pool_in_flight(pool, &n), MCPMUX_OK);
    CHECK_STATUS(mcpmux_cancel(id), MCPMUX_OK);
    CHECK(waiter_wait(&w, 10000));
    CHECK_STATUS(w.status, MCPMUX_ERR_CANCELLED);
    CHECK_CONTAINS(w.json, "\"code\":\"cancelled\"");
    CHECK(now_s() - start < 10.0);
    /* Cancelling what has finished, or what never was, is harmless. */
    CHECK_STATUS(mcpmux_cancel(id), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_cancel(0), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_cancel(UINT64_MAX), MCPMUX_ERR_NOT_FOUND);
    waiter_destroy(&w);

    waiter_init(&w);
    CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__slow__echo", "{\"text\": \"done\"}", NULL, 0, NULL,
                                         on_complete, &w, &id),
                 MCPMUX_OK);
    CHECK(waiter_wait(&w, 20000));
    CHECK_STATUS(w.status, MCPMUX_OK);
    CHECK_STATUS(mcpmux_cancel(id), MCPMUX_ERR_NOT_FOUND);
    CHECK(w.done == 1);
    waiter_destroy(&w);

    /* The pool still works after a cancel (the server got notifications/cancelled). */
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__slow__echo", "{\"text\": \"after\"}", NULL, 0, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "after");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

#define CONCURRENT 100

typedef struct {
    atomic_int ok, bad, calls;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} fanout;

typedef struct {
    fanout *f;
    char expect[32];
} fanout_call;

static void on_fanout(void *user_data, mcpmux_status status, const char *json, size_t len) {
    fanout_call *c = user_data;
    if (status == MCPMUX_OK && strlen(json) == len && strstr(json, c->expect)) {
        atomic_fetch_add(&c->f->ok, 1);
    } else {
        atomic_fetch_add(&c->f->bad, 1);
    }
    pthread_mutex_lock(&c->f->mu);
    atomic_fetch_add(&c->f->calls, 1);
    pthread_cond_broadcast(&c->f->cv);
    pthread_mutex_unlock(&c->f->mu);
}

static void test_many_concurrent_calls(void) {
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "fan", "");
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_list(pool, NULL, NULL, 20000, &out), MCPMUX_OK);
    mcpmux_string_free(out);

    static fanout f;
    atomic_init(&f.ok, 0);
    atomic_init(&f.bad, 0);
    atomic_init(&f.calls, 0);
    pthread_mutex_init(&f.mu, NULL);
    pthread_cond_init(&f.cv, NULL);
    static fanout_call calls[CONCURRENT];
    for (int i = 0; i < CONCURRENT; i++) {
        calls[i].f = &f;
        snprintf(calls[i].expect, sizeof calls[i].expect, "message-%03d", i);
        char args[64];
        snprintf(args, sizeof args, "{\"text\": \"%s\"}", calls[i].expect);
        CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__fan__echo", args, NULL, 0, NULL, on_fanout,
                                             &calls[i], NULL),
                     MCPMUX_OK);
    }
    double deadline = now_s() + 60;
    pthread_mutex_lock(&f.mu);
    while (atomic_load(&f.calls) < CONCURRENT && now_s() < deadline) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&f.cv, &f.mu, &ts);
    }
    pthread_mutex_unlock(&f.mu);
    CHECK(atomic_load(&f.ok) == CONCURRENT);
    CHECK(atomic_load(&f.bad) == 0);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    /* Exactly once each, also after the close. */
    CHECK(atomic_load(&f.calls) == CONCURRENT);
    pthread_mutex_destroy(&f.mu);
    pthread_cond_destroy(&f.cv);
}

#define BLOCKERS 6

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int blocked, released, finished;
} gate;

static void on_complete_block(void *user_data, mcpmux_status status, const char *json,
                              size_t len) {
    (void)status;
    (void)json;
    (void)len;
    gate *g = user_data;
    pthread_mutex_lock(&g->mu);
    g->blocked++;
    pthread_cond_broadcast(&g->cv);
    while (!g->released) {
        pthread_cond_wait(&g->cv, &g->mu);
    }
    g->finished++;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* Callbacks that block (more of them than the machine has cores) do not stall the
 * library: other requests still complete meanwhile. */
static void test_blocking_callbacks_do_not_stall(void) {
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "gate", "");
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_list(pool, NULL, NULL, 20000, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    static gate g;
    memset(&g, 0, sizeof g);
    pthread_mutex_init(&g.mu, NULL);
    pthread_cond_init(&g.cv, NULL);
    for (int i = 0; i < BLOCKERS; i++) {
        CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__gate__echo", "{\"text\": \"b\"}", NULL, 0, NULL,
                                             on_complete_block, &g, NULL),
                     MCPMUX_OK);
    }
    double deadline = now_s() + 20;
    pthread_mutex_lock(&g.mu);
    while (g.blocked < BLOCKERS && now_s() < deadline) {
        pthread_mutex_unlock(&g.mu);
        sleep_ms(10);
        pthread_mutex_lock(&g.mu);
    }
    int blocked = g.blocked;
    pthread_mutex_unlock(&g.mu);
    CHECK(blocked == BLOCKERS);

    waiter w;
    waiter_init(&w);
    CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__gate__echo", "{\"text\": \"free\"}", NULL, 0, NULL,
                                         on_complete, &w, NULL),
                 MCPMUX_OK);
    CHECK(waiter_wait(&w, 10000));
    CHECK_STATUS(w.status, MCPMUX_OK);
    CHECK_CONTAINS(w.json, "free");
    waiter_destroy(&w);

    pthread_mutex_lock(&g.mu);
    g.released = 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    CHECK_STATUS(mcpmux_pool_close(pool, 5000), MCPMUX_OK);
    CHECK(g.finished == BLOCKERS);
    pthread_mutex_destroy(&g.mu);
    pthread_cond_destroy(&g.cv);
}

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int events, tool_called, other, freed;
    mcpmux_pool close_me; /* when set, the event callback closes this pool */
    mcpmux_subscription_id unsubscribe_me; /* when set, the callback ends this subscription */
    mcpmux_status unsubscribe_status;
    mcpmux_status close_status;
} event_log;

static void event_log_init(event_log *l) {
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    l->close_status = -1;
}

static void on_event(void *user_data, const char *json, size_t len) {
    event_log *l = user_data;
    pthread_mutex_lock(&l->mu);
    l->events++;
    if (strlen(json) == len && strstr(json, "\"type\":\"tool:called\"")) {
        l->tool_called++;
        if (l->close_me) {
            l->close_status = mcpmux_pool_close(l->close_me, 0);
            l->close_me = 0;
        }
        if (l->unsubscribe_me) {
            l->unsubscribe_status = mcpmux_events_unsubscribe(l->unsubscribe_me);
            l->unsubscribe_me = 0;
        }
    } else {
        l->other++;
    }
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

static void on_event_free(void *user_data) {
    event_log *l = user_data;
    pthread_mutex_lock(&l->mu);
    l->freed++;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

/* Waits until `*field >= want` (read under `mu`, signalled on `cv`) or `ms` pass. */
static int counter_wait(pthread_mutex_t *mu, pthread_cond_t *cv, int *field, int want, long ms) {
    double deadline = now_s() + ms / 1000.0;
    pthread_mutex_lock(mu);
    while (*field < want && now_s() < deadline) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(cv, mu, &ts);
    }
    int ok = *field >= want;
    pthread_mutex_unlock(mu);
    return ok;
}

static int event_wait(event_log *l, int *field, int want, long ms) {
    return counter_wait(&l->mu, &l->cv, field, want, ms);
}

static void test_events(void) {
    mcpmux_pool pool = open_pool();
    event_log all, only_tools, until_close;
    event_log_init(&all);
    event_log_init(&only_tools);
    event_log_init(&until_close);
    mcpmux_subscription_id s_all = 0, s_tools = 0, s_close = 0;
    CHECK_STATUS(mcpmux_events_subscribe(pool, NULL, on_event, &all, on_event_free, &s_all),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_events_subscribe(pool, "tool:called", on_event, &only_tools,
                                         on_event_free, &s_tools),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_events_subscribe(pool, NULL, on_event, &until_close, on_event_free,
                                         &s_close),
                 MCPMUX_OK);
    CHECK(s_all != s_tools && s_all != 0);
    mcpmux_subscription_id bad = 0;
    CHECK_STATUS(mcpmux_events_subscribe(pool, "\xff", on_event, &all, on_event_free, &bad),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(bad == 0 && all.freed == 0);

    add_test_server(pool, "ev", ""); /* servers:changed */
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__ev__echo", "{\"text\": \"e\"}", NULL, 0, &out),
                 MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK(event_wait(&all, &all.tool_called, 1, 10000));
    CHECK(event_wait(&only_tools, &only_tools.tool_called, 1, 10000));
    CHECK(all.other >= 2); /* servers:changed, server:connected, connection:state... */
    CHECK(only_tools.other == 0);

    /* Unsubscribing from a host thread: the finalizer has run when it returns. */
    CHECK_STATUS(mcpmux_events_unsubscribe(s_all), MCPMUX_OK);
    CHECK(all.freed == 1);
    CHECK_STATUS(mcpmux_events_unsubscribe(s_all), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_events_unsubscribe(0), MCPMUX_ERR_NOT_FOUND);
    int seen = all.events;
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__ev__echo", "{\"text\": \"e\"}", NULL, 0, &out),
                 MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK(event_wait(&only_tools, &only_tools.tool_called, 2, 10000));
    CHECK(all.events == seen);
    CHECK_STATUS(mcpmux_events_unsubscribe(s_tools), MCPMUX_OK);
    CHECK(only_tools.freed == 1);

    /* A callback may end its own subscription. */
    event_log self_ending;
    event_log_init(&self_ending);
    mcpmux_subscription_id s_self = 0;
    pthread_mutex_lock(&self_ending.mu);
    CHECK_STATUS(mcpmux_events_subscribe(pool, "tool:called", on_event, &self_ending,
                                         on_event_free, &s_self),
                 MCPMUX_OK);
    self_ending.unsubscribe_me = s_self;
    pthread_mutex_unlock(&self_ending.mu);
    for (int i = 0; i < 2; i++) {
        CHECK_STATUS(mcpmux_tools_call(pool, "mcp__ev__echo", "{\"text\": \"e\"}", NULL, 0, &out),
                     MCPMUX_OK);
        mcpmux_string_free(out);
    }
    CHECK(event_wait(&self_ending, &self_ending.freed, 1, 10000));
    CHECK_STATUS(self_ending.unsubscribe_status, MCPMUX_OK);
    CHECK(self_ending.tool_called == 1);
    CHECK_STATUS(mcpmux_events_unsubscribe(s_self), MCPMUX_ERR_NOT_FOUND);

    /* Closing the pool ends the remaining subscription and runs its finalizer. */
    CHECK(until_close.freed == 0);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK(until_close.freed == 1);
    CHECK_STATUS(mcpmux_events_unsubscribe(s_close), MCPMUX_ERR_NOT_FOUND);
    CHECK(all.freed == 1 && only_tools.freed == 1 && until_close.freed == 1);
}

/* A completion callback that makes a blocking call, then closes the pool. */
typedef struct {
    waiter w;
    mcpmux_pool pool;
    mcpmux_status nested_status, close_status, after_close_status;
    mcpmux_status open_other, list_other, close_other;
    char other_options[512];
    char nested[64];
} reentrant;

static void on_complete_reenter(void *user_data, mcpmux_status status, const char *json,
                                size_t len) {
    reentrant *r = user_data;
    char *out = NULL;
    r->nested_status = mcpmux_tools_call(r->pool, "mcp__re__echo", "{\"text\": \"nested\"}", NULL, 0, &out);
    if (out) {
        snprintf(r->nested, sizeof r->nested, "%s", strstr(out, "nested") ? "nested" : "?");
    }
    mcpmux_string_free(out);
    /* Another pool opened, used and closed from a library thread. */
    mcpmux_pool other = 0;
    r->open_other = mcpmux_pool_open(r->other_options, &other);
    r->list_other = mcpmux_servers_list(other, &out);
    mcpmux_string_free(out);
    out = NULL;
    r->close_other = mcpmux_pool_close(other, 0);
    r->close_status = mcpmux_pool_close(r->pool, 0);
    r->after_close_status = mcpmux_servers_list(r->pool, &out);
    on_complete(&r->w, status, json, len);
}

/* Events of one name (a filtered subscription), counted, with the last one kept. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int count;
    char last[512];
} named_events;

static void on_named_event(void *user_data, const char *json, size_t len) {
    named_events *e = user_data;
    pthread_mutex_lock(&e->mu);
    e->count++;
    snprintf(e->last, sizeof e->last, "%.*s", (int)len, json);
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* Subscribes `e` to the events called `name`. */
static mcpmux_subscription_id named_events_on(mcpmux_pool pool, const char *name,
                                              named_events *e) {
    memset(e, 0, sizeof *e);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    mcpmux_subscription_id id = 0;
    CHECK_STATUS(mcpmux_events_subscribe(pool, name, on_named_event, e, NULL, &id), MCPMUX_OK);
    return id;
}

/* Waits (2 s at most: no cache TTL is waited for) for the `want`th event; whether it came. */
static int named_events_wait(named_events *e, int want) {
    return counter_wait(&e->mu, &e->cv, &e->count, want, 2000);
}

static void call_tool_ok(mcpmux_pool pool, const char *tool, const char *args) {
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_call(pool, tool, args, NULL, 20000, &out), MCPMUX_OK);
    mcpmux_string_free(out);
}

/* A server's changes reach the host at once, on 2026-07-28 (its listen stream) and before;
 * its logs at the level asked for. */
static void test_server_changes(void) {
    const char *eras[][2] = {{"modern", ""}, {"legacy", "\"--legacy\""}};
    for (int i = 0; i < 2; i++) {
        const char *era = eras[i][0];
        mcpmux_pool pool = open_pool();
        add_test_server(pool, era, eras[i][1]);
        named_events tools, updated;
        mcpmux_subscription_id s_tools = named_events_on(pool, "tools:changed", &tools);
        mcpmux_subscription_id s_updated = named_events_on(pool, "resource:updated", &updated);
        char tool[64], out_check[64];
        char *out = NULL;
        snprintf(tool, sizeof tool, "mcp__%s__add_tool", era);
        call_tool_ok(pool, tool, "{\"name\": \"late\"}");
        CHECK(named_events_wait(&tools, 1));
        CHECK_STATUS(mcpmux_tools_list(pool, era, NULL, 20000, &out), MCPMUX_OK);
        snprintf(out_check, sizeof out_check, "\"id\":\"mcp__%s__late\"", era);
        CHECK_CONTAINS(out, out_check);
        mcpmux_string_free(out);

        CHECK_STATUS(mcpmux_resources_subscribe(pool, era, "test://hello", 20000), MCPMUX_OK);
        snprintf(tool, sizeof tool, "mcp__%s__notify", era);
        call_tool_ok(pool, tool, "{\"what\": \"updated\", \"uri\": \"test://hello\"}");
        CHECK(named_events_wait(&updated, 1));
        pthread_mutex_lock(&updated.mu);
        CHECK_CONTAINS(updated.last, "\"uri\":\"test://hello\"");
        pthread_mutex_unlock(&updated.mu);

        /* Logs: unasked, a 2026-07-28 server sends none; a server's logLevel asks for them. */
        named_events logs;
        mcpmux_subscription_id s_logs = named_events_on(pool, "log", &logs);
        snprintf(tool, sizeof tool, "mcp__%s__log", era);
        CHECK_STATUS(mcpmux_tools_call(pool, tool, "{\"message\": \"m\", \"level\": \"error\"}", NULL,
                                       20000, &out),
                     MCPMUX_OK);
        CHECK_CONTAINS(out, i == 0 ? "not asked for" : "sent");
        mcpmux_string_free(out);
        CHECK_STATUS(mcpmux_servers_update(pool, era, "{\"logLevel\": \"warning\"}", &out),
                     MCPMUX_OK);
        CHECK_CONTAINS(out, "\"logLevel\":\"warning\"");
        mcpmux_string_free(out);
        CHECK_STATUS(mcpmux_tools_call(pool, tool, "{\"message\": \"q\", \"level\": \"info\"}", NULL,
                                       20000, &out),
                     MCPMUX_OK);
        CHECK_CONTAINS(out, "not asked for");
        mcpmux_string_free(out);
        call_tool_ok(pool, tool, "{\"message\": \"loud\", \"level\": \"critical\"}");
        CHECK(named_events_wait(&logs, i == 0 ? 1 : 2));
        pthread_mutex_lock(&logs.mu);
        CHECK_CONTAINS(logs.last, "[test-server] loud");
        CHECK_CONTAINS(logs.last, "\"level\":\"critical\"");
        pthread_mutex_unlock(&logs.mu);
        CHECK_STATUS(mcpmux_events_unsubscribe(s_logs), MCPMUX_OK);
        pthread_mutex_destroy(&logs.mu);
        pthread_cond_destroy(&logs.cv);

        CHECK_STATUS(mcpmux_events_unsubscribe(s_tools), MCPMUX_OK);
        CHECK_STATUS(mcpmux_events_unsubscribe(s_updated), MCPMUX_OK);
        CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
        pthread_mutex_destroy(&tools.mu);
        pthread_cond_destroy(&tools.cv);
        pthread_mutex_destroy(&updated.mu);
        pthread_cond_destroy(&updated.cv);
    }
}

static void test_close_from_callbacks(void) {
    /* From a completion callback. */
    reentrant r;
    memset(&r, 0, sizeof r);
    waiter_init(&r.w);
    r.pool = open_pool();
    char other_path[320];
    config_path(other_path, sizeof other_path);
    snprintf(r.other_options, sizeof r.other_options, "{\"configPath\": \"%s\"}", other_path);
    add_test_server(r.pool, "re", "");
    event_log log;
    event_log_init(&log);
    mcpmux_subscription_id sid = 0;
    CHECK_STATUS(mcpmux_events_subscribe(r.pool, "servers:changed", on_event, &log,
                                         on_event_free, &sid),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_tools_call_async(r.pool, "mcp__re__echo", "{\"text\": \"outer\"}", NULL, 0, NULL,
                                         on_complete_reenter, &r, NULL),
                 MCPMUX_OK);
    CHECK(waiter_wait(&r.w, 30000));
    CHECK_STATUS(r.w.status, MCPMUX_OK);
    CHECK_STATUS(r.nested_status, MCPMUX_OK);
    CHECK(strcmp(r.nested, "nested") == 0);
    CHECK_STATUS(r.close_status, MCPMUX_OK);
    CHECK_STATUS(r.after_close_status, MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(r.open_other, MCPMUX_OK);
    CHECK_STATUS(r.list_other, MCPMUX_OK);
    CHECK_STATUS(r.close_other, MCPMUX_OK);
    /* The close finishes in the background: the subscription's finalizer shows it. */
    CHECK(event_wait(&log, &log.freed, 1, 20000));
    CHECK_STATUS(mcpmux_pool_close(r.pool, 0), MCPMUX_ERR_INVALID_HANDLE);
    waiter_destroy(&r.w);

    /* From an event callback, while other calls run. */
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "ev2", "");
    event_log closer;
    event_log_init(&closer);
    closer.close_me = pool;
    CHECK_STATUS(mcpmux_events_subscribe(pool, "tool:called", on_event, &closer, on_event_free,
                                         &sid),
                 MCPMUX_OK);
    waiter slow;
    waiter_init(&slow);
    CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__ev2__sleep", "{\"ms\": 30000}", NULL, 0, NULL,
                                         on_complete, &slow, NULL),
                 MCPMUX_OK);
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__ev2__echo", "{\"text\": \"x\"}", NULL, 0, &out),
                 MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK(event_wait(&closer, &closer.freed, 1, 20000));
    CHECK_STATUS(closer.close_status, MCPMUX_OK);
    /* The sleeping call was cut by the close (drain 0). */
    CHECK(waiter_wait(&slow, 20000));
    CHECK_STATUS(slow.status, MCPMUX_ERR_SHUTTING_DOWN);
    waiter_destroy(&slow);
}

static void test_close_drains(void) {
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "dr", "");
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_list(pool, NULL, NULL, 20000, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    waiter quick, slow;
    waiter_init(&quick);
    waiter_init(&slow);
    CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__dr__sleep", "{\"ms\": 300}", NULL, 0, NULL, on_complete,
                                         &quick, NULL),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__dr__sleep", "{\"ms\": 30000}", NULL, 0, NULL,
                                         on_complete, &slow, NULL),
                 MCPMUX_OK);
    sleep_ms(100);
    double start = now_s();
    CHECK_STATUS(mcpmux_pool_close(pool, 1500), MCPMUX_OK);
    double took = now_s() - start;
    /* Both callbacks have run by the time close returns. */
    CHECK(quick.done == 1 && slow.done == 1);
    CHECK_STATUS(quick.status, MCPMUX_OK);
    CHECK_CONTAINS(quick.json, "slept");
    CHECK_STATUS(slow.status, MCPMUX_ERR_SHUTTING_DOWN);
    CHECK(took >= 1.0 && took < 15.0);
    waiter_destroy(&quick);
    waiter_destroy(&slow);
}

static void test_resources_and_prompts(void) {
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "rp", "");
    char *out = NULL;
    waiter w;

    CHECK_STATUS(mcpmux_resources_list(pool, NULL, NULL, 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"uri\":\"test://hello\"");
    CHECK_CONTAINS(out, "\"serverName\":\"rp\"");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_resources_list_async(pool, "rp", NULL, 20000, on_complete, &w, NULL));
    CHECK_CONTAINS(w.json, "test://info");
    waiter_destroy(&w);

    CHECK_STATUS(mcpmux_resources_templates(pool, "rp", NULL, 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "test://echo/{text}");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_resources_templates_async(pool, NULL, NULL, 20000, on_complete, &w, NULL));
    CHECK_CONTAINS(w.json, "uriTemplate");
    waiter_destroy(&w);

    CHECK_STATUS(mcpmux_resources_read(pool, "rp", "test://hello", 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "Hello from mcpmux-test-server");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_resources_read_async(pool, "rp", "test://echo/abc", 20000, on_complete, &w,
                                          NULL));
    CHECK_CONTAINS(w.json, "\"text\":\"abc\"");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_resources_read(pool, "rp", "test://missing", 20000, &out),
                 MCPMUX_ERR_PROTOCOL);

    /* The test server refuses a subscription to test://secret alone: the refusal comes
     * through, naming the resource. */
    CHECK_STATUS(mcpmux_resources_subscribe(pool, "rp", "test://secret", 20000),
                 MCPMUX_ERR_PROTOCOL);
    char *refusal = mcpmux_last_error();
    CHECK_CONTAINS(refusal, "test://secret");
    mcpmux_string_free(refusal);
    waiter_init(&w);
    AWAIT(&w, mcpmux_resources_subscribe_async(pool, "rp", "test://hello", 20000, on_complete,
                                               &w, NULL));
    CHECK_STATUS(w.status, MCPMUX_OK);
    waiter_destroy(&w);
    waiter_init(&w);
    AWAIT(&w, mcpmux_resources_unsubscribe_async(pool, "rp", "test://hello", 20000, on_complete,
                                                 &w, NULL));
    CHECK_STATUS(w.status, MCPMUX_OK);
    waiter_destroy(&w);

    CHECK_STATUS(mcpmux_prompts_list(pool, NULL, NULL, 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"greet\"");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_prompts_list_async(pool, "rp", NULL, 20000, on_complete, &w, NULL));
    CHECK_CONTAINS(w.json, "greet");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_prompts_get(pool, "rp", "greet", "{\"name\": \"C\"}", 20000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "Hello, C!");
    mcpmux_string_free(out);
    waiter_init(&w);
    AWAIT(&w, mcpmux_prompts_get_async(pool, "rp", "greet", "{\"name\": \"async\"}", 20000,
                                       on_complete, &w, NULL));
    CHECK_CONTAINS(w.json, "Hello, async!");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_prompts_get(pool, "rp", "nope", NULL, 20000, &out), MCPMUX_ERR_PROTOCOL);
    CHECK_STATUS(mcpmux_prompts_get(pool, "nobody", "greet", NULL, 20000, &out),
                 MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

typedef struct {
    mcpmux_pool pool;
    atomic_int ok, refused, other;
} hammer;

static void *hammer_thread(void *arg) {
    hammer *h = arg;
    /* Until the close refuses this thread (bounded, should the close never come). */
    for (int i = 0; i < 100000; i++) {
        char *out = NULL;
        mcpmux_status s = mcpmux_tools_call(h->pool, "mcp__ham__echo", "{\"text\": \"x\"}", NULL, 0, &out);
        if (s == MCPMUX_OK && out && strstr(out, "\"x\"")) {
            atomic_fetch_add(&h->ok, 1);
        } else if (s == MCPMUX_ERR_INVALID_HANDLE || s == MCPMUX_ERR_SHUTTING_DOWN) {
            atomic_fetch_add(&h->refused, 1);
            mcpmux_string_free(out);
            return NULL;
        } else {
            fprintf(stderr, "  hammer: %s\n", mcpmux_status_name(s));
            atomic_fetch_add(&h->other, 1);
        }
        mcpmux_string_free(out);
    }
    return NULL;
}

/* Host threads keep calling while another thread closes the pool: each call either
 * succeeds or is refused with a clear status. */
static void test_close_while_threads_call(void) {
    static hammer h;
    h.pool = open_pool();
    atomic_init(&h.ok, 0);
    atomic_init(&h.refused, 0);
    atomic_init(&h.other, 0);
    add_test_server(h.pool, "ham", "");
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_list(h.pool, NULL, NULL, 20000, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    pthread_t threads[8];
    for (int i = 0; i < 8; i++) {
        CHECK(pthread_create(&threads[i], NULL, hammer_thread, &h) == 0);
    }
    sleep_ms(150);
    CHECK_STATUS(mcpmux_pool_close(h.pool, 2000), MCPMUX_OK);
    for (int i = 0; i < 8; i++) {
        pthread_join(threads[i], NULL);
    }
    CHECK(atomic_load(&h.ok) > 0);
    CHECK(atomic_load(&h.refused) == 8);
    CHECK(atomic_load(&h.other) == 0);
}

/* A server killed under the pool: the host process lives on (no SIGPIPE kills it when the
 * library writes to the dead server's stdin) and the pool reports or recovers. */
static void test_server_killed(void) {
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "victim", "");
    char *out = NULL;
    CHECK_STATUS(mcpmux_servers_connect(pool, "victim", 20000, &out), MCPMUX_OK);
    const char *p = out ? strstr(out, "\"pid\":") : NULL;
    long pid = p ? strtol(p + 6, NULL, 10) : 0;
    mcpmux_string_free(out);
    CHECK(pid > 0);
    if (pid > 0) {
        CHECK(kill((pid_t)pid, SIGKILL) == 0);
        sleep_ms(100);
        for (int i = 0; i < 5; i++) {
            mcpmux_status s = mcpmux_tools_call(pool, "mcp__victim__echo", "{\"text\": \"still\"}", NULL,
                                                5000, &out);
            CHECK(s == MCPMUX_OK || s == MCPMUX_ERR_CONNECTION);
            mcpmux_string_free(out);
        }
    }
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

static void test_roots(void) {
    mcpmux_pool pool = open_pool();
    char *out = NULL;
    CHECK_STATUS(mcpmux_roots_get(pool, &out), MCPMUX_OK);
    CHECK(out && strcmp(out, "[]") == 0);
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_roots_set(pool, "[{\"uri\": \"file:///tmp/a\", \"name\": \"a\"}]"),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_roots_get(pool, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"uri\":\"file:///tmp/a\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_roots_set(pool, "{\"uri\": \"file:///x\"}"), MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_roots_set(pool, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_roots_get(pool, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_roots_set_for_server(pool, "nobody", NULL), MCPMUX_ERR_NOT_FOUND);
    add_test_server(pool, "rooted", "");
    CHECK_STATUS(mcpmux_roots_set_for_server(pool, "rooted", "[{\"uri\": \"file:///tmp/b\"}]"),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_roots_set_for_server(pool, "rooted", NULL), MCPMUX_OK);
    CHECK_STATUS(mcpmux_roots_set_for_server(pool, NULL, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_roots_get(pool, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_roots_set(pool, "[]"), MCPMUX_ERR_INVALID_HANDLE);
}

/* Calls server-everything's get-roots-list until its answer contains `want` (the tool
 * appears only once the server has seen the client's capabilities). */
static int everything_sees_root(mcpmux_pool pool, const char *want) {
    for (int i = 0; i < 100; i++) {
        char *out = NULL;
        mcpmux_status s = mcpmux_tools_call(pool, "mcp__everything__get-roots-list", "{}", NULL, 10000, &out);
        int found = s == MCPMUX_OK && out && strstr(out, want);
        mcpmux_string_free(out);
        if (found) {
            return 1;
        }
        sleep_ms(100);
    }
    return 0;
}

/* Host handlers for server-everything's sampling and elicitation tools. */
typedef struct {
    atomic_int calls, freed;
    mcpmux_status bad_json, good, again;
    char request[2048];
} host_log;

static void on_sampling(void *user_data, mcpmux_host_request_id request, const char *json,
                        size_t len) {
    host_log *l = user_data;
    atomic_fetch_add(&l->calls, 1);
    snprintf(l->request, sizeof l->request, "%.*s", (int)len, json);
    /* A wrong answer is refused and the request keeps waiting for a good one. */
    l->bad_json = mcpmux_host_request_respond(request, "{\"role\": \"assistant\"}");
    l->good = mcpmux_host_request_respond(
        request, "{\"role\": \"assistant\", \"content\": {\"type\": \"text\", \"text\": "
                 "\"sampled by C\"}, \"model\": \"c-model\", \"stopReason\": \"endTurn\"}");
    l->again = mcpmux_host_request_respond(request, "{}");
}

typedef struct {
    mcpmux_host_request_id request;
} later;

/* Answers from another thread, a little later, as a host showing a form would. */
static void *answer_later(void *arg) {
    later *a = arg;
    sleep_ms(50);
    mcpmux_host_request_respond(
        a->request, "{\"action\": \"accept\", \"content\": {\"name\": \"Ada Lovelace\", "
                    "\"check\": true}}");
    free(a);
    return NULL;
}

static void on_elicitation(void *user_data, mcpmux_host_request_id request, const char *json,
                           size_t len) {
    (void)json;
    (void)len;
    host_log *l = user_data;
    atomic_fetch_add(&l->calls, 1);
    later *a = malloc(sizeof *a);
    a->request = request;
    pthread_t t;
    if (pthread_create(&t, NULL, answer_later, a) == 0) {
        pthread_detach(t);
    } else {
        free(a);
        mcpmux_host_request_refuse(request, "no thread");
    }
}

static void on_host_free(void *user_data) {
    host_log *l = user_data;
    atomic_fetch_add(&l->freed, 1);
}

/* A 2026-07-28 server may answer prompts/get and resources/read with input_required: the
 * host's elicitation handler answers (here from another thread, later) and the request
 * completes in the next round. */
static void test_input_rounds(void) {
    mcpmux_pool pool = open_pool();
    static host_log asked;
    memset(&asked, 0, sizeof asked);
    CHECK_STATUS(mcpmux_pool_set_elicitation_handler(pool, on_elicitation, &asked, on_host_free),
                 MCPMUX_OK);
    add_test_server(pool, "rounds", "");
    char *out = NULL;
    CHECK_STATUS(mcpmux_prompts_get(pool, "rounds", "ask", NULL, 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "Hello, Ada Lovelace!");
    mcpmux_string_free(out);
    waiter w;
    waiter_init(&w);
    AWAIT(&w, mcpmux_resources_read_async(pool, "rounds", "test://ask", 20000, on_complete, &w,
                                          NULL));
    CHECK_CONTAINS(w.json, "asked for Ada Lovelace");
    waiter_destroy(&w);
    CHECK(atomic_load(&asked.calls) == 2);
    /* Rounds with only the server's state need nothing of the host. */
    CHECK_STATUS(mcpmux_resources_read(pool, "rounds", "test://wait", 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "waited two rounds");
    mcpmux_string_free(out);
    CHECK(atomic_load(&asked.calls) == 2);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK(atomic_load(&asked.freed) == 1);
}

/* A list call with {"refresh": true} asks the server again: a tool the server added without
 * saying so is missing from the cached list and in the fresh one. Bad options are refused. */
static void test_list_refresh(void) {
    mcpmux_pool pool = open_pool();
    /* Lists the server says are fresh for a minute (else it is asked each time). */
    add_test_server(pool, "quiet", "\"--tools-ttl-ms\", \"60000\"");
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_list(pool, "quiet", NULL, 20000, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_resources_list(pool, "quiet", NULL, 20000, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    call_tool_ok(pool, "mcp__quiet__add_tool", "{\"name\": \"unannounced\", \"quiet\": true}");
    CHECK_STATUS(mcpmux_tools_list(pool, "quiet", NULL, 20000, &out), MCPMUX_OK);
    CHECK(out && !strstr(out, "mcp__quiet__unannounced"));
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_resources_list(pool, "quiet", NULL, 20000, &out), MCPMUX_OK);
    CHECK(out && !strstr(out, "test://added/unannounced"));
    mcpmux_string_free(out);
    waiter w;
    waiter_init(&w);
    AWAIT(&w, mcpmux_tools_list_async(pool, "quiet", "{\"refresh\": true}", 20000, on_complete,
                                      &w, NULL));
    CHECK(w.status == MCPMUX_OK);
    CHECK_CONTAINS(w.json, "mcp__quiet__unannounced");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_resources_list(pool, "quiet", "{\"refresh\": true}", 20000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "test://added/unannounced");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_prompts_list(pool, "quiet", "{}", 20000, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_list(pool, "quiet", "{\"refesh\": true}", 20000, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    char *why = mcpmux_last_error();
    CHECK_CONTAINS(why, "unknown field `refesh`");
    mcpmux_string_free(why);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

/* A server that needs the user to open a URL first answers -32042: the status
 * MCPMUX_ERR_URL_ELICITATION_REQUIRED, its URL in mcpmux_last_error_data() and in the
 * completion's "data"; the server's completion notice is the event elicitation:complete. */
static void test_url_elicitation(void) {
    const char *eras[][2] = {{"modern", ""}, {"legacy", "\"--legacy\""}};
    for (int i = 0; i < 2; i++) {
        const char *era = eras[i][0];
        mcpmux_pool pool = open_pool();
        add_test_server(pool, era, eras[i][1]);
        named_events done;
        mcpmux_subscription_id sub = named_events_on(pool, "elicitation:complete", &done);
        char tool[64];
        snprintf(tool, sizeof tool, "mcp__%s__connect_account", era);
        char *out = NULL;
        CHECK_STATUS(mcpmux_tools_call(pool, tool, "{}", NULL, 20000, &out),
                     MCPMUX_ERR_URL_ELICITATION_REQUIRED);
        CHECK(mcpmux_last_error_status() == MCPMUX_ERR_URL_ELICITATION_REQUIRED);
        char *data = mcpmux_last_error_data();
        CHECK_CONTAINS(data, "\"url\":\"https://example.test/connect?elicitation="
                             "connect-example-account\"");
        CHECK_CONTAINS(data, "\"elicitationId\":\"connect-example-account\"");
        mcpmux_string_free(data);
        CHECK(named_events_wait(&done, 1));
        pthread_mutex_lock(&done.mu);
        CHECK_CONTAINS(done.last, "\"type\":\"elicitation:complete\"");
        CHECK_CONTAINS(done.last, "\"elicitationId\":\"connect-example-account\"");
        pthread_mutex_unlock(&done.mu);
        CHECK_STATUS(mcpmux_tools_call(pool, tool, "{}", NULL, 20000, &out), MCPMUX_OK);
        CHECK_CONTAINS(out, "account connected");
        mcpmux_string_free(out);
        /* An error without data leaves none. */
        CHECK_STATUS(mcpmux_tools_call(pool, "mcp__nobody__x", "{}", NULL, 20000, &out),
                     MCPMUX_ERR_NOT_FOUND);
        CHECK(mcpmux_last_error_data() == NULL);
        CHECK_STATUS(mcpmux_events_unsubscribe(sub), MCPMUX_OK);
        CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
        pthread_mutex_destroy(&done.mu);
        pthread_cond_destroy(&done.cv);
    }
    /* Asynchronously, the completion carries the data. */
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "later", "");
    waiter w;
    waiter_init(&w);
    AWAIT(&w, mcpmux_tools_call_async(pool, "mcp__later__connect_account", "{}", NULL, 20000, NULL,
                                      on_complete, &w, NULL));
    CHECK(w.status == MCPMUX_ERR_URL_ELICITATION_REQUIRED);
    CHECK_CONTAINS(w.json, "\"code\":\"url_elicitation_required\"");
    CHECK_CONTAINS(w.json, "\"data\":{\"elicitations\":[{");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

/* Answers a sampling request with a tool call when the request offers tools. */
static void on_sampling_tools(void *user_data, mcpmux_host_request_id request, const char *json,
                              size_t len) {
    host_log *l = user_data;
    atomic_fetch_add(&l->calls, 1);
    snprintf(l->request, sizeof l->request, "%.*s", (int)len, json);
    l->good = mcpmux_host_request_respond(
        request, "{\"role\": \"assistant\", \"content\": [{\"type\": \"tool_use\", \"id\": \"c1\", "
                 "\"name\": \"get_weather\", \"input\": {\"city\": \"Lyon\"}}], \"model\": "
                 "\"c-model\", \"stopReason\": \"toolUse\"}");
}

/* A sampling handler set with {"tools": true} is sent the request's tools and answers a
 * tool call, in both eras; one set without it is never sent tools. */
static void test_sampling_with_tools(void) {
    const char *eras[][2] = {{"modern", ""}, {"legacy", "\"--legacy\""}};
    for (int i = 0; i < 2; i++) {
        const char *era = eras[i][0];
        char tool[64];
        snprintf(tool, sizeof tool, "mcp__%s__sample_with_tools", era);
        mcpmux_pool pool = open_pool();
        static host_log asked;
        memset(&asked, 0, sizeof asked);
        CHECK_STATUS(mcpmux_pool_set_sampling_handler(pool, "{\"tools\": true}",
                                                      on_sampling_tools, &asked, NULL),
                     MCPMUX_OK);
        add_test_server(pool, era, eras[i][1]);
        char *out = NULL;
        CHECK_STATUS(mcpmux_tools_call(pool, tool, "{}", NULL, 20000, &out), MCPMUX_OK);
        CHECK_CONTAINS(out, "stop=toolUse tool_use:get_weather({\\\"city\\\":\\\"Lyon\\\"})");
        mcpmux_string_free(out);
        CHECK(atomic_load(&asked.calls) == 1);
        CHECK(asked.good == MCPMUX_OK);
        CHECK_CONTAINS(asked.request, "\"tools\":[{");
        CHECK_CONTAINS(asked.request, "\"toolChoice\":{\"mode\":\"required\"}");
        CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);

        pool = open_pool();
        CHECK_STATUS(mcpmux_pool_set_sampling_handler(pool, NULL, on_sampling_tools, &asked, NULL),
                     MCPMUX_OK);
        add_test_server(pool, era, eras[i][1]);
        CHECK(mcpmux_tools_call(pool, tool, "{}", NULL, 20000, &out) != MCPMUX_OK);
        CHECK(atomic_load(&asked.calls) == 1);
        CHECK_STATUS(mcpmux_pool_set_sampling_handler(pool, "{\"tool\": true}", on_sampling_tools,
                                                      &asked, NULL),
                     MCPMUX_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    }
}

/* Methods mcpmux has no call for go through by name: a request and its result, a
 * notification, and the server's own notification back as a `notification` event. */
static void test_methods_by_name(void) {
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "m", "");
    named_events got;
    mcpmux_subscription_id sub = named_events_on(pool, "notification", &got);
    char *out = NULL;
    CHECK_STATUS(mcpmux_send_request(pool, "m", "test/echo", "{\"x\": 1}", 20000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"method\":\"test/echo\"");
    CHECK_CONTAINS(out, "\"params\":{\"x\":1}");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_send_request(pool, "m", "test/nothing", NULL, 20000, &out),
                 MCPMUX_ERR_PROTOCOL);
    CHECK_STATUS(mcpmux_send_request(pool, "m", "test/echo", "[1]", 20000, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_send_notification(pool, "m", "test/ping", "{\"y\": 2}", 20000), MCPMUX_OK);
    CHECK(named_events_wait(&got, 1));
    pthread_mutex_lock(&got.mu);
    CHECK_CONTAINS(got.last, "\"method\":\"test/pong\"");
    CHECK_CONTAINS(got.last, "\"params\":{\"y\":2}");
    pthread_mutex_unlock(&got.mu);
    /* The test server offers no completions. */
    CHECK_STATUS(mcpmux_complete(pool, "m",
                                 "{\"ref\": {\"type\": \"ref/prompt\", \"name\": \"greet\"}, "
                                 "\"argument\": {\"name\": \"name\", \"value\": \"A\"}}",
                                 20000, &out),
                 MCPMUX_ERR_PROTOCOL);
    CHECK_STATUS(mcpmux_events_unsubscribe(sub), MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    pthread_mutex_destroy(&got.mu);
    pthread_cond_destroy(&got.cv);
}

static void on_progress_ignored(void *user_data, const char *json, size_t len) {
    (void)user_data;
    (void)json;
    (void)len;
}

/* A result that breaks its tool's outputSchema is MCPMUX_ERR_INVALID_RESULT with the
 * problems as data, unless the call takes results as they are; a caller's _meta reaches the
 * server; maxTotalMs caps a call that progress would keep alive. */
static void test_call_options(void) {
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "o", "");
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_list(pool, "o", NULL, 20000, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__o__mismatch", "{}", NULL, 20000, &out),
                 MCPMUX_ERR_INVALID_RESULT);
    CHECK(strcmp(mcpmux_status_name(MCPMUX_ERR_INVALID_RESULT), "invalid_result") == 0);
    char *data = mcpmux_last_error_data();
    CHECK_CONTAINS(data, "{\"problems\":[\"/answer: ");
    mcpmux_string_free(data);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__o__mismatch", "{}", "{\"validate\": false}", 20000,
                                   &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"structuredContent\":{\"answer\":42}");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__o__meta", "{}",
                                   "{\"meta\": {\"traceparent\": \"00-4bf92f3577b34da6a3ce929d0e0e4736-"
                                   "00f067aa0ba902b7-01\"}}",
                                   20000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "4bf92f3577b34da6a3ce929d0e0e4736");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__o__meta", "{}", "{\"valdate\": false}", 20000, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    waiter w;
    waiter_init(&w);
    AWAIT(&w, mcpmux_tools_call_async(pool, "mcp__o__sleep", "{\"ms\": 5000}",
                                      "{\"maxTotalMs\": 600}", 300, on_progress_ignored,
                                      on_complete, &w, NULL));
    CHECK(w.status == MCPMUX_ERR_TIMEOUT);
    CHECK_CONTAINS(w.json, "whole call");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

/* Calls a server-everything tool until its answer contains `want` (some tools appear only
 * once the server has seen the client's capabilities). */
static int everything_answers(mcpmux_pool pool, const char *tool, const char *args,
                              const char *want) {
    for (int i = 0; i < 100; i++) {
        char *out = NULL;
        mcpmux_status s = mcpmux_tools_call(pool, tool, args, NULL, 10000, &out);
        int found = s == MCPMUX_OK && out && strstr(out, want);
        if (i == 99) {
            fprintf(stderr, "  %s: %s %s\n", tool, mcpmux_status_name(s), out ? out : "");
        }
        mcpmux_string_free(out);
        if (found) {
            return 1;
        }
        sleep_ms(100);
    }
    return 0;
}

static void test_host_request_misuse(void) {
    CHECK_STATUS(mcpmux_host_request_respond(0, "{}"), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_host_request_respond(12345, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_host_request_refuse(UINT64_MAX, NULL), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_host_request_refuse(1, "\xff"), MCPMUX_ERR_INVALID_ARGUMENT);
    mcpmux_pool pool = open_pool();
    static host_log l;
    memset(&l, 0, sizeof l);
    /* Replacing or removing a handler frees its user data, once. */
    CHECK_STATUS(mcpmux_pool_set_sampling_handler(pool, NULL, on_sampling, &l, on_host_free), MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_set_sampling_handler(pool, NULL, on_sampling, &l, on_host_free), MCPMUX_OK);
    CHECK(atomic_load(&l.freed) == 1);
    CHECK_STATUS(mcpmux_pool_set_sampling_handler(pool, NULL, NULL, NULL, NULL), MCPMUX_OK);
    CHECK(atomic_load(&l.freed) == 2);
    CHECK_STATUS(mcpmux_pool_set_elicitation_handler(pool, on_elicitation, &l, on_host_free),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK(atomic_load(&l.freed) == 3);
    CHECK_STATUS(mcpmux_pool_set_sampling_handler(pool, NULL, on_sampling, &l, on_host_free),
                 MCPMUX_ERR_INVALID_HANDLE);
    CHECK(atomic_load(&l.freed) == 3);
}

/* Copies the first "uri":"..." value of `json` into `buf`. */
static int first_uri(const char *json, char *buf, size_t n) {
    const char *p = json ? strstr(json, "\"uri\":\"") : NULL;
    if (!p) {
        return 0;
    }
    p += 7;
    const char *end = strchr(p, '"');
    if (!end || (size_t)(end - p) >= n) {
        return 0;
    }
    memcpy(buf, p, (size_t)(end - p));
    buf[end - p] = '\0';
    return 1;
}

/* Writes `text` to `path`. */
static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Skills (SEP-2640) of FastMCP's skills provider: listed without a file read, loaded and read
 * checked against the listing; an unknown skill or file is refused. */
static void test_skills(void) {
    const char *python = getenv("MCPMUX_SKILLS_PYTHON");
    const char *script = getenv("MCPMUX_SKILLS_SERVER");
    if (!python || !script || access(python, X_OK) != 0) {
        skip("FastMCP 4.1 (.deps/tasks-venv, from scripts/test-deps.sh)");
        return;
    }
    char folder[320], dir[400], path[480], input[1400], *out = NULL;
    snprintf(folder, sizeof folder, "%s/skills-%d", tmp_root, ++tmp_counter);
    snprintf(dir, sizeof dir, "%s/pdf-forms", folder);
    mkdir(folder, 0700);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/SKILL.md", dir);
    write_file(path, "---\nname: pdf-forms\ndescription: Fill in PDF forms\n---\n\n# Filling forms\n");
    mcpmux_pool pool = open_pool();
    snprintf(input, sizeof input,
             "{\"name\": \"skills\", \"config\": {\"command\": \"%s\", \"args\": [\"%s\", \"%s\"]}}",
             python, script, folder);
    CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
    mcpmux_string_free(out);

    CHECK_STATUS(mcpmux_skills_list(pool, NULL, 60000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"pdf-forms\"");
    CHECK_CONTAINS(out, "\"description\":\"Fill in PDF forms\"");
    CHECK_CONTAINS(out, "\"digest\":\"sha256:");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_skills_load(pool, "skills", "pdf-forms", 30000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"instructions\":\"# Filling forms");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_skills_read_file(pool, "skills", "pdf-forms", "skill://pdf-forms/NOPE.md",
                                         30000, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_skills_load(pool, "skills", "no-such-skill", 30000, &out),
                 MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_skills_load(pool, "skills", NULL, 30000, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_close(pool, -1), MCPMUX_OK);
}

/* Approves what a task asks, inside the callback, recording the question. */
static void on_task_question(void *user_data, mcpmux_host_request_id request, const char *json,
                             size_t len) {
    host_log *l = user_data;
    if (strstr(json, "Approve the launch?") != NULL && len == strlen(json)) {
        atomic_fetch_add(&l->calls, 1);
    }
    mcpmux_host_request_respond(request, "{\"action\": \"accept\", \"content\": {\"ok\": true}}");
}

/* Tools that run as tasks (FastMCP with fastmcp-tasks): a call follows its task to the
 * result, the task's status messages reach the call's progress callback, a question from
 * inside the task goes to the host's handler and its answer back, and cancelling the call
 * cancels the task at the server. */
static void test_tasks(void) {
    const char *python = getenv("MCPMUX_SKILLS_PYTHON");
    const char *script = getenv("MCPMUX_TASKS_SERVER");
    if (!python || !script || access(python, X_OK) != 0) {
        skip("FastMCP 4.1 with fastmcp-tasks (.deps/tasks-venv, from scripts/test-deps.sh)");
        return;
    }
    char input[1000], *out = NULL;
    mcpmux_pool pool = open_pool();
    snprintf(input, sizeof input,
             "{\"name\": \"tasks\", \"config\": {\"command\": \"%s\", \"args\": [\"%s\"]}}",
             python, script);
    CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
    mcpmux_string_free(out);

    static progress_log l;
    progress_log_init(&l);
    CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__tasks__crunch", "{\"n\": 3}", NULL, 60000,
                                         on_progress, on_progress_done, &l, NULL),
                 MCPMUX_OK);
    CHECK(waiter_wait(&l.w, 60000));
    CHECK_STATUS(l.w.status, MCPMUX_OK);
    CHECK_CONTAINS(l.w.json, "crunched 3");
    CHECK(atomic_load(&l.progress) >= 1);
    CHECK_CONTAINS(l.last, "\"message\":\"step ");
    waiter_destroy(&l.w);

    static host_log asked;
    memset(&asked, 0, sizeof asked);
    CHECK_STATUS(mcpmux_pool_set_elicitation_handler(pool, on_task_question, &asked, on_host_free),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__tasks__approve", "{\"item\": \"the launch\"}",
                                   NULL, 60000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "the launch: accept");
    mcpmux_string_free(out);
    CHECK(atomic_load(&asked.calls) == 1);

    char marker[320], started[340], args[400];
    snprintf(marker, sizeof marker, "%s/task-%d", tmp_root, ++tmp_counter);
    snprintf(started, sizeof started, "%s.started", marker);
    snprintf(args, sizeof args, "{\"marker\": \"%s\"}", marker);
    waiter w;
    waiter_init(&w);
    mcpmux_request_id id = 0;
    CHECK_STATUS(mcpmux_tools_call_async(pool, "mcp__tasks__stall", args, NULL, 60000, NULL,
                                         on_complete, &w, &id),
                 MCPMUX_OK);
    for (int i = 0; i < 300 && access(started, F_OK) != 0; i++) {
        sleep_ms(50);
    }
    CHECK(access(started, F_OK) == 0);
    CHECK_STATUS(mcpmux_cancel(id), MCPMUX_OK);
    CHECK(waiter_wait(&w, 20000));
    CHECK_STATUS(w.status, MCPMUX_ERR_CANCELLED);
    waiter_destroy(&w);
    /* The server was told: its task stopped. */
    for (int i = 0; i < 200 && access(marker, F_OK) != 0; i++) {
        sleep_ms(50);
    }
    CHECK(access(marker, F_OK) == 0);
    CHECK_STATUS(mcpmux_pool_close(pool, -1), MCPMUX_OK);
}

/* MCP Apps: the pool declares the extension (option `apps`), the test server offers its app,
 * its view comes checked with the policy to load it under; the view's calls reach only its
 * own server's tools for apps; its bridge answers `ui/initialize` and tells it the tool's
 * input and result once initialized. */
static void test_apps(void) {
    mcpmux_pool pool = open_pool_with("\"apps\": {}");
    if (!add_test_server(pool, "app", "\"--apps\"")) {
        mcpmux_pool_close(pool, 0);
        return;
    }
    char *view = NULL, *out = NULL;
    CHECK_STATUS(mcpmux_app_view(pool, "mcp__app__dashboard", 30000, &view), MCPMUX_OK);
    CHECK_CONTAINS(view, "\"resourceUri\":\"ui://test/dashboard.html\"");
    CHECK_CONTAINS(view, "connect-src 'self' https://api.example.com;");
    CHECK_CONTAINS(view, "\"allow\":\"camera\"");
    CHECK_CONTAINS(view, "test dashboard");
    CHECK_STATUS(mcpmux_app_view(pool, "mcp__app__secret", 30000, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);

    CHECK_STATUS(mcpmux_app_call(pool, view, "refresh", "{\"city\": \"Oslo\"}", 30000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "refreshed Oslo");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_app_call(pool, view, "secret", NULL, 30000, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    char *msg = mcpmux_last_error();
    CHECK_CONTAINS(msg, "visibility");
    mcpmux_string_free(msg);
    CHECK_STATUS(mcpmux_app_call(pool, view, "nope", NULL, 30000, &out), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_app_call(pool, "{\"not\": \"a view\"}", "refresh", NULL, 0, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_app_read_resource(pool, view, "test://hello", 30000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"contents\"");
    mcpmux_string_free(out);

    mcpmux_app_bridge bridge = 0;
    CHECK_STATUS(mcpmux_app_bridge_new(pool, view, "{\"theme\": \"dark\"}", &bridge), MCPMUX_OK);
    CHECK(bridge != 0);
    CHECK_STATUS(mcpmux_app_bridge_tool_input(bridge, "{\"city\": \"Rome\"}", &out), MCPMUX_OK);
    CHECK(out && strcmp(out, "[]") == 0);
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_app_bridge_handle(bridge,
                                          "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": "
                                          "\"ui/initialize\", \"params\": {}}",
                                          30000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"protocolVersion\":\"2026-01-26\"");
    CHECK_CONTAINS(out, "\"theme\":\"dark\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_app_bridge_handle(
                     bridge, "{\"jsonrpc\": \"2.0\", \"method\": \"ui/notifications/initialized\"}",
                     30000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "ui/notifications/tool-input");
    CHECK_CONTAINS(out, "Rome");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_app_bridge_tool_result(
                     bridge, "{\"content\": [{\"type\": \"text\", \"text\": \"sunny\"}]}", &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "ui/notifications/tool-result");
    mcpmux_string_free(out);
    waiter w;
    waiter_init(&w);
    AWAIT(&w, mcpmux_app_bridge_handle_async(
                  bridge,
                  "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/call\", \"params\": "
                  "{\"name\": \"refresh\", \"arguments\": {\"city\": \"Lyon\"}}}",
                  30000, on_complete, &w, NULL));
    CHECK(w.status == MCPMUX_OK);
    CHECK_CONTAINS(w.json, "refreshed Lyon");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_app_bridge_handle(
                     bridge,
                     "{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"ui/open-link\", \"params\": "
                     "{\"url\": \"https://example.com\"}}",
                     30000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"host\":{");
    mcpmux_string_free(out);
    /* The host acted on it: its reply, or the error the view sees. */
    CHECK_STATUS(mcpmux_app_bridge_reply("3", NULL, NULL, &out), MCPMUX_OK);
    CHECK(out && strcmp(out, "{\"id\":3,\"jsonrpc\":\"2.0\",\"result\":{}}") == 0);
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_app_bridge_reply("\"a\"", "{\"isError\": false}", NULL, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"result\":{\"isError\":false}");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_app_bridge_reply("3", NULL, "the user said no", &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"error\":{\"code\":-32000,\"message\":\"the user said no\"}");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_app_bridge_reply("{}", NULL, NULL, &out), MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_app_bridge_reply(NULL, NULL, NULL, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_app_bridge_handle(bridge, "not json", 0, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_app_bridge_tool_cancelled(bridge, NULL, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_app_bridge_free(bridge), MCPMUX_OK);
    CHECK_STATUS(mcpmux_app_bridge_free(bridge), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_app_bridge_tool_cancelled(bridge, "gone", &out),
                 MCPMUX_ERR_INVALID_HANDLE);
    /* A pool handle is no bridge handle. */
    CHECK_STATUS(mcpmux_app_bridge_handle(pool, "{}", 0, &out), MCPMUX_ERR_INVALID_HANDLE);
    mcpmux_string_free(view);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

static void test_server_everything(void) {
    const char *js = getenv("MCPMUX_EVERYTHING_JS");
    if (!js || access(js, R_OK) != 0) {
        skip("server-everything (run scripts/test-deps.sh)");
        return;
    }
    mcpmux_pool pool = open_pool();
    char input[1024], *out = NULL;
    snprintf(input, sizeof input,
             "{\"name\": \"everything\", \"config\": {\"command\": \"node\", \"args\": [\"%s\", "
             "\"stdio\"]}}",
             js);
    CHECK_STATUS(mcpmux_roots_set(pool, "[{\"uri\": \"file:///tmp/mcpmux-c-first\"}]"),
                 MCPMUX_OK);
    static host_log sampling, elicitation;
    memset(&sampling, 0, sizeof sampling);
    memset(&elicitation, 0, sizeof elicitation);
    CHECK_STATUS(mcpmux_pool_set_sampling_handler(pool, NULL, on_sampling, &sampling, on_host_free),
                 MCPMUX_OK);
    CHECK_STATUS(
        mcpmux_pool_set_elicitation_handler(pool, on_elicitation, &elicitation, on_host_free),
        MCPMUX_OK);
    CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
    mcpmux_string_free(out);

    CHECK_STATUS(mcpmux_tools_list(pool, "everything", NULL, 60000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"echo\"");
    CHECK_CONTAINS(out, "\"name\":\"get-sum\"");
    mcpmux_string_free(out);
    /* A prompt's second argument completes from the first (the context). */
    CHECK_STATUS(mcpmux_complete(pool, "everything",
                                 "{\"ref\": {\"type\": \"ref/prompt\", \"name\": \"completable-prompt\"}, "
                                 "\"argument\": {\"name\": \"name\", \"value\": \"\"}, "
                                 "\"context\": {\"arguments\": {\"department\": \"Sales\"}}}",
                                 20000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"values\":[\"David\",\"Eve\",\"Frank\"]");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_complete(pool, "everything", "{\"ref\": {}}", 20000, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__everything__echo", "{\"message\": \"from C\"}", NULL, 0,
                                   &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "from C");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__everything__get-sum", "{\"a\": 20, \"b\": 22}", NULL, 0,
                                   &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "42");
    mcpmux_string_free(out);

    CHECK_STATUS(mcpmux_resources_list(pool, "everything", NULL, 30000, &out), MCPMUX_OK);
    char uri[256] = "";
    CHECK(first_uri(out, uri, sizeof uri));
    mcpmux_string_free(out);
    if (uri[0]) {
        CHECK_STATUS(mcpmux_resources_read(pool, "everything", uri, 30000, &out), MCPMUX_OK);
        CHECK_CONTAINS(out, "\"contents\"");
        mcpmux_string_free(out);
        CHECK_STATUS(mcpmux_resources_subscribe(pool, "everything", uri, 30000), MCPMUX_OK);
        CHECK_STATUS(mcpmux_resources_unsubscribe(pool, "everything", uri, 30000), MCPMUX_OK);
        waiter w;
        waiter_init(&w);
        AWAIT(&w, mcpmux_resources_unsubscribe_async(pool, "everything", uri, 30000, on_complete,
                                                     &w, NULL));
        CHECK_STATUS(w.status, MCPMUX_OK);
        waiter_destroy(&w);
    }
    CHECK_STATUS(mcpmux_prompts_list(pool, "everything", NULL, 30000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"serverName\":\"everything\"");
    mcpmux_string_free(out);

    /* Roots: the server asks the client (roots/list) and sees the pool's, then its own. */
    CHECK(everything_sees_root(pool, "file:///tmp/mcpmux-c-first"));
    CHECK_STATUS(mcpmux_roots_set_for_server(pool, "everything",
                                             "[{\"uri\": \"file:///tmp/mcpmux-c-second\"}]"),
                 MCPMUX_OK);
    CHECK(everything_sees_root(pool, "file:///tmp/mcpmux-c-second"));

    /* Sampling answered from inside the handler, elicitation from another thread. */
    CHECK(everything_answers(pool, "mcp__everything__trigger-sampling-request",
                             "{\"prompt\": \"what is mcpmux?\", \"maxTokens\": 10}",
                             "sampled by C"));
    CHECK(atomic_load(&sampling.calls) == 1);
    CHECK_CONTAINS(sampling.request, "\"serverName\":\"everything\"");
    CHECK_CONTAINS(sampling.request, "what is mcpmux?");
    CHECK_STATUS(sampling.bad_json, MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(sampling.good, MCPMUX_OK);
    CHECK_STATUS(sampling.again, MCPMUX_ERR_NOT_FOUND);
    CHECK(everything_answers(pool, "mcp__everything__trigger-elicitation-request", "{}",
                             "Ada Lovelace"));
    CHECK(atomic_load(&elicitation.calls) >= 1);
    CHECK(atomic_load(&sampling.freed) == 0);
    CHECK_STATUS(mcpmux_pool_close(pool, -1), MCPMUX_OK);
    CHECK(atomic_load(&sampling.freed) == 1 && atomic_load(&elicitation.freed) == 1);
}

/* A reply over maxMessageBytes is its own status, with a message that says what to raise;
 * the connection reopens for the next call. */
static void test_message_too_large(void) {
    char *out = NULL;
    mcpmux_pool pool = open_pool_with("\"maxMessageBytes\": 65536");
    add_test_server(pool, "t", "");
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__t__big", "{\"size\": 100000}", NULL, 0, &out),
                 MCPMUX_ERR_MESSAGE_TOO_LARGE);
    CHECK(out == NULL);
    char *why = mcpmux_last_error();
    /* The reply: 100,000 bytes of filler in its JSON-RPC envelope. */
    CHECK_CONTAINS(why, "server 't' sent a message of 100");
    CHECK_CONTAINS(why, "over the limit of 65536 bytes (64 KiB)");
    CHECK_CONTAINS(why, "maxMessageBytes");
    mcpmux_string_free(why);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__t__big", "{\"size\": 5}", NULL, 0, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "xxxxx");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

/* The scripted model service (mcpmux-fake-llm, the wire format of OpenAI's Chat
 * Completions) in a child process; it stops when its stdin closes. */
typedef struct {
    pid_t pid;
    int stdin_fd;
    char base_url[256];
} fake_llm;

/* Starts it with `turns` (its JSON script); 0 when it could not start. */
static int fake_llm_start(fake_llm *f, const char *turns) {
    const char *bin = getenv("MCPMUX_FAKE_LLM");
    if (!bin || access(bin, X_OK) != 0) {
        fprintf(stderr, "  MCPMUX_FAKE_LLM must name the mcpmux-fake-llm binary\n");
        return 0;
    }
    int in[2], out[2];
    if (pipe(in) != 0) {
        return 0;
    }
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return 0;
    }
    pid_t pid = fork();
    if (pid == 0) {
        /* Only async-signal-safe calls between fork and exec: the library has threads. */
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execl(bin, bin, turns, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    f->pid = pid;
    f->stdin_fd = in[1];
    f->base_url[0] = 0;
    FILE *r = fdopen(out[0], "r");
    int ok = r && fgets(f->base_url, sizeof f->base_url, r) != NULL;
    if (r) {
        fclose(r);
    } else {
        close(out[0]);
    }
    f->base_url[strcspn(f->base_url, "\r\n")] = 0;
    return ok && pid > 0 && strncmp(f->base_url, "http://127.0.0.1:", 17) == 0;
}

static void fake_llm_stop(fake_llm *f) {
    close(f->stdin_fd);
    waitpid(f->pid, NULL, 0);
}

/* As a new user: an empty config, a real server added, and at once an agent run against
 * the model service over HTTP, with no listing call in between. The model searches, then
 * calls the tool its search found; a second, broken server is reported, not fatal. */
static void test_agent_on_a_fresh_config(void) {
    const char *js = getenv("MCPMUX_EVERYTHING_JS");
    if (!js || access(js, R_OK) != 0) {
        skip("server-everything (run scripts/test-deps.sh)");
        return;
    }
    for (int with_broken = 0; with_broken < 2; with_broken++) {
        fake_llm f;
        CHECK(fake_llm_start(&f, "[{\"tools\": [[\"search_tools\", {\"query\": \"echo\"}]]},"
                                 " {\"callFound\": \"echo\", \"arguments\": {\"message\": \"hi from C\"}},"
                                 " {\"text\": \"It said hi.\"}]"));
        char path[320], opts[512], input[1024], provider_json[512], *out = NULL;
        config_path(path, sizeof path);
        /* The defaults a new user gets, adding connects included. */
        snprintf(opts, sizeof opts, "{\"configPath\": \"%s\", \"healthCheckIntervalMs\": 0}",
                 path);
        mcpmux_pool pool = 0;
        CHECK_STATUS(mcpmux_pool_open(opts, &pool), MCPMUX_OK);
        snprintf(input, sizeof input,
                 "{\"name\": \"everything\", \"isTrusted\": true, \"config\": {\"command\":"
                 " \"node\", \"args\": [\"%s\", \"stdio\"]}}",
                 js);
        CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
        mcpmux_string_free(out);
        if (with_broken) {
            CHECK_STATUS(mcpmux_servers_add(pool,
                                            "{\"name\": \"broken\", \"config\": {\"command\":"
                                            " \"/nonexistent/server\"}}",
                                            &out),
                         MCPMUX_OK);
            mcpmux_string_free(out);
        }
        snprintf(provider_json, sizeof provider_json,
                 "{\"type\": \"openai\", \"model\": \"m\", \"baseUrl\": \"%s\"}", f.base_url);
        mcpmux_provider provider = 0;
        CHECK_STATUS(mcpmux_provider_create(provider_json, &provider), MCPMUX_OK);
        mcpmux_agent agent = 0;
        CHECK_STATUS(mcpmux_agent_new(pool, provider, NULL, &agent), MCPMUX_OK);
        CHECK_STATUS(mcpmux_agent_run_wait(agent, "Use the echo tool and say hi", NULL, NULL, NULL,
                                           NULL, 120000, &out),
                     MCPMUX_OK);
        CHECK_CONTAINS(out, "\"stop\":\"finished\"");
        CHECK_CONTAINS(out, "\"text\":\"It said hi.\"");
        CHECK_CONTAINS(out, "\"name\":\"mcp__everything__echo\"");
        CHECK_CONTAINS(out, "Echo: hi from C");
        if (with_broken) {
            /* (Under valgrind the spawn itself seems to work and the handshake fails.) */
            CHECK_CONTAINS(out, "\\\"unavailable\\\":[{\\\"error\\\":\\\"connection to server 'broken' failed");
        } else {
            CHECK(out && !strstr(out, "unavailable"));
        }
        mcpmux_string_free(out);
        CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
        CHECK_STATUS(mcpmux_provider_free(provider), MCPMUX_OK);
        CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
        fake_llm_stop(&f);
    }
}

typedef struct {
    pthread_mutex_t mu;
    int count;
    char asked[2][1024];
} approvals_log;

static void on_policy_approve(void *user_data, mcpmux_host_request_id request, const char *json,
                              size_t len) {
    approvals_log *l = user_data;
    pthread_mutex_lock(&l->mu);
    if (l->count < 2) {
        snprintf(l->asked[l->count], sizeof l->asked[0], "%.*s", (int)len, json);
    }
    l->count++;
    pthread_mutex_unlock(&l->mu);
    mcpmux_host_request_respond(request, "\"once\"");
}

/* Under the read-only policy a trusted server's read-only tool runs unasked and its
 * destructive one is asked about, with the tool's annotations and why. */
static void test_agent_approval_policy(void) {
    fake_llm f;
    CHECK(fake_llm_start(&f, "[{\"tools\": [[\"mcp__t__echo\", {\"text\": \"x\"}],"
                             " [\"mcp__t__end_streams\", {}]]}, {\"text\": \"done\"}]"));
    mcpmux_pool pool = open_pool();
    char input[512], provider_json[512], *out = NULL;
    snprintf(input, sizeof input,
             "{\"name\": \"t\", \"isTrusted\": true, \"config\": {\"command\": \"%s\"}}",
             test_server());
    CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    snprintf(provider_json, sizeof provider_json,
             "{\"type\": \"openai\", \"model\": \"m\", \"baseUrl\": \"%s\"}", f.base_url);
    mcpmux_provider provider = 0;
    CHECK_STATUS(mcpmux_provider_create(provider_json, &provider), MCPMUX_OK);
    mcpmux_agent agent = 0;
    CHECK_STATUS(mcpmux_agent_new(pool, provider, "{\"approvalPolicy\": \"read_only\"}", &agent),
                 MCPMUX_OK);
    static approvals_log l;
    memset(&l, 0, sizeof l);
    pthread_mutex_init(&l.mu, NULL);
    CHECK_STATUS(mcpmux_agent_run_wait(agent, "go", NULL, NULL, on_policy_approve, &l, 60000,
                                       &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"stop\":\"finished\"");
    mcpmux_string_free(out);
    pthread_mutex_lock(&l.mu);
    CHECK(l.count == 1);
    CHECK_CONTAINS(l.asked[0], "\"toolId\":\"mcp__t__end_streams\"");
    CHECK_CONTAINS(l.asked[0], "\"reason\":\"not_read_only\"");
    CHECK_CONTAINS(l.asked[0], "\"destructiveHint\":true");
    CHECK_CONTAINS(l.asked[0], "\"trusted\":true");
    pthread_mutex_unlock(&l.mu);
    mcpmux_agent bad = 0;
    CHECK_STATUS(mcpmux_agent_new(pool, provider, "{\"approvalPolicy\": \"sometimes\"}", &bad),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
    CHECK_STATUS(mcpmux_provider_free(provider), MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    pthread_mutex_destroy(&l.mu);
    fake_llm_stop(&f);
}

static void test_default_options(void) {
    /* NULL options: the config file comes from $MCPMUX_CONFIG. */
    char path[320];
    config_path(path, sizeof path);
    setenv("MCPMUX_CONFIG", path, 1);
    mcpmux_pool pool = 0;
    CHECK_STATUS(mcpmux_pool_open(NULL, &pool), MCPMUX_OK);
    char *out = NULL;
    CHECK_STATUS(mcpmux_servers_add(pool, "{\"name\": \"d\", \"config\": {\"url\": \"http://127.0.0.1:9/mcp\"}}",
                                    &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"type\":\"http\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (f) {
        fclose(f);
    }
    unsetenv("MCPMUX_CONFIG");
}

/* ---------------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    void (*fn)(void);
} test_case;

/* ---------------------------------------------------------------------------------- */
/* Host tools, recipes, conversations, providers and agents                            */
/* ---------------------------------------------------------------------------------- */

typedef struct {
    atomic_int calls;
    atomic_int freed;
    atomic_int cancels;
    atomic_ullong never; /* request id of a call left unanswered */
    atomic_ullong cancelled_id;
    atomic_int bad_status;   /* answering "{" */
    atomic_int token_status; /* mcpmux_host_request_token() on a tool call */
    pthread_t thread;
    atomic_int has_thread;
} tool_ctx;

static void *tool_answer_later(void *arg) {
    mcpmux_host_request_id id = *(mcpmux_host_request_id *)arg;
    free(arg);
    sleep_ms(50);
    mcpmux_host_request_respond(id, "\"from a thread\"");
    return NULL;
}

/* c_echo: what it answers depends on the "mode" argument. */
static void on_tool(void *user_data, mcpmux_host_request_id request, const char *json,
                    size_t len) {
    tool_ctx *t = user_data;
    (void)len;
    atomic_fetch_add(&t->calls, 1);
    if (strstr(json, "\"mode\":\"sync\"")) {
        mcpmux_host_request_respond(request, "\"sync answer\"");
    } else if (strstr(json, "\"mode\":\"object\"")) {
        mcpmux_host_request_respond(request, "{\"n\": 42}");
    } else if (strstr(json, "\"mode\":\"result\"")) {
        mcpmux_host_request_respond(
            request, "{\"content\": [{\"type\": \"text\", \"text\": \"full result\"}]}");
    } else if (strstr(json, "\"mode\":\"refuse\"")) {
        mcpmux_host_request_refuse(request, "nope");
    } else if (strstr(json, "\"mode\":\"bad\"")) {
        atomic_store(&t->bad_status, mcpmux_host_request_respond(request, "{"));
        atomic_store(&t->token_status, mcpmux_host_request_token(request, "x"));
        mcpmux_host_request_respond(request, "\"fixed\"");
    } else if (strstr(json, "\"mode\":\"thread\"")) {
        mcpmux_host_request_id *arg = malloc(sizeof *arg);
        *arg = request;
        pthread_create(&t->thread, NULL, tool_answer_later, arg);
        atomic_store(&t->has_thread, 1);
    } else if (strstr(json, "\"mode\":\"never\"")) {
        atomic_store(&t->never, request);
    } else {
        /* c_shout for the agent test: answers "HEY". */
        mcpmux_host_request_respond(request, "\"HEY\"");
    }
}

static void on_tool_cancel(void *user_data, mcpmux_host_request_id request) {
    tool_ctx *t = user_data;
    atomic_store(&t->cancelled_id, request);
    atomic_fetch_add(&t->cancels, 1);
}

static void on_tool_free(void *user_data) {
    tool_ctx *t = user_data;
    atomic_fetch_add(&t->freed, 1);
}

static const char *echo_schema =
    "{\"type\": \"object\", \"properties\": {\"text\": {\"type\": \"string\"},"
    " \"mode\": {\"type\": \"string\"}}, \"required\": [\"text\"]}";

/* Calls c_echo in `mode` and returns the result (caller frees). */
static char *call_echo(mcpmux_pool pool, const char *mode) {
    char args[200];
    snprintf(args, sizeof args, "{\"text\": \"hi\", \"mode\": \"%s\"}", mode);
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_call(pool, "c_echo", args, NULL, 10000, &out), MCPMUX_OK);
    return out;
}

static int wait_for(atomic_int *v, int at_least, long ms) {
    for (long waited = 0; waited < ms; waited += 10) {
        if (atomic_load(v) >= at_least) {
            return 1;
        }
        sleep_ms(10);
    }
    return atomic_load(v) >= at_least;
}

/* The next tab-separated field of `*rest` (empty fields kept), or "" at the end. */
static char *tab_field(char **rest) {
    char *start = *rest;
    if (!start) {
        return "";
    }
    char *tab = strchr(start, '\t');
    if (tab) {
        *tab = 0;
        *rest = tab + 1;
    } else {
        *rest = NULL;
    }
    return start;
}

/* What the contract tool answers, and how mcpmux_host_request_respond() took it. */
typedef struct {
    const char *answer;
    atomic_int status;
} contract_tool;

static void on_contract_tool(void *user_data, mcpmux_host_request_id request, const char *json,
                             size_t len) {
    contract_tool *c = user_data;
    (void)json;
    (void)len;
    mcpmux_status s = mcpmux_host_request_respond(request, c->answer);
    atomic_store(&c->status, s);
    if (s != MCPMUX_OK) {
        /* A refused answer leaves the request waiting: the host may answer again. */
        CHECK_STATUS(mcpmux_host_request_refuse(request, "the answer was refused"), MCPMUX_OK);
    }
}

/* The host contract: every answer of tests/contract/host_answers.json gives what the table
 * says, through mcpmux_host_answer_read(), and for host tools through a real call too. */
static void test_host_answer_contract(void) {
    const char *path = getenv("MCPMUX_CONTRACT_TABLE");
    FILE *table = path ? fopen(path, "r") : NULL;
    if (!table) {
        fprintf(stderr, "  MCPMUX_CONTRACT_TABLE must name the contract table's lines\n");
        CHECK(table != NULL);
        return;
    }
    mcpmux_pool pool = open_pool();
    static contract_tool tool;
    CHECK_STATUS(mcpmux_tools_register(pool, "c_contract", "Answers what the table says",
                                       "{\"type\": \"object\"}", on_contract_tool, NULL, &tool,
                                       NULL, NULL),
                 MCPMUX_OK);
    static char line[16384];
    int rows = 0;
    while (fgets(line, sizeof line, table)) {
        line[strcspn(line, "\n")] = 0;
        char *rest = line;
        char *kind = tab_field(&rest), *answer = tab_field(&rest);
        char *expected = tab_field(&rest), *says = tab_field(&rest);
        int refused = strncmp(expected, "REFUSED:", 8) == 0;
        char *out = NULL;
        mcpmux_status s = mcpmux_host_answer_read(kind, answer, &out);
        if (refused) {
            CHECK_STATUS(s, MCPMUX_ERR_INVALID_ARGUMENT);
            CHECK(strcmp(mcpmux_status_name(s), expected + 8) == 0);
            char *why = mcpmux_last_error();
            CHECK_CONTAINS(why, says);
            mcpmux_string_free(why);
        } else if (s != MCPMUX_OK || !out || strcmp(out, expected) != 0) {
            current_failed = 1;
            fprintf(stderr, "  %s %s: got %s, the table says %s\n", kind, answer,
                    out ? out : mcpmux_status_name(s), expected);
        }
        mcpmux_string_free(out);
        out = NULL;
        if (strcmp(kind, "tool_result") == 0) {
            tool.answer = answer;
            CHECK_STATUS(mcpmux_tools_call(pool, "c_contract", "{}", NULL, 10000, &out), MCPMUX_OK);
            if (refused) {
                CHECK(atomic_load(&tool.status) == MCPMUX_ERR_INVALID_ARGUMENT);
                CHECK_CONTAINS(out, "the answer was refused");
            } else {
                /* Read again as a CallToolResult: the same JSON, in core's key order. */
                char *again = NULL;
                CHECK_STATUS(mcpmux_host_answer_read("tool_result", out, &again), MCPMUX_OK);
                if (!again || strcmp(again, expected) != 0) {
                    current_failed = 1;
                    fprintf(stderr, "  host tool answering %s gave %s, the table says %s\n",
                                answer, again ? again : "nothing", expected);
                }
                mcpmux_string_free(again);
            }
            mcpmux_string_free(out);
        }
        rows++;
    }
    fclose(table);
    CHECK(rows >= 30);
    char *out = NULL;
    CHECK_STATUS(mcpmux_host_answer_read("guess", "1", &out), MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_host_answer_read("approval", "once", &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"once\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_host_answer_read("approval", NULL, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

static void test_host_tools(void) {
    mcpmux_pool pool = open_pool();
    static tool_ctx t;
    memset(&t, 0, sizeof t);
    char *out = NULL;

    /* Refused registrations never take the user data. */
    CHECK_STATUS(mcpmux_tools_register(pool, "mcp__x", "d", echo_schema, on_tool, NULL, &t,
                                       on_tool_free, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", "d", "{", on_tool, NULL, &t,
                                       on_tool_free, NULL),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", "d", "{\"type\": \"string\"}", on_tool,
                                       NULL, &t, on_tool_free, NULL),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", "d", echo_schema, NULL, NULL, &t,
                                       on_tool_free, NULL),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_register(pool, NULL, "d", echo_schema, on_tool, NULL, &t,
                                       on_tool_free, NULL),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK(atomic_load(&t.freed) == 0);

    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", "Echo from C", echo_schema, on_tool,
                                       on_tool_cancel, &t, on_tool_free, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"serverName\":\"local\"");
    mcpmux_string_free(out);
    /* Replacing it frees the first registration's user data. */
    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", "Echo from C", echo_schema, on_tool,
                                       on_tool_cancel, &t, on_tool_free, NULL),
                 MCPMUX_OK);
    CHECK(atomic_load(&t.freed) == 1);

    CHECK_STATUS(mcpmux_tools_list(pool, NULL, NULL, 10000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"id\":\"c_echo\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_search(pool, "echo from C", 5, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "c_echo");
    mcpmux_string_free(out);
    /* A limit of 0 is "not given": core's default. */
    CHECK_STATUS(mcpmux_tools_search(pool, "echo from C", 0, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "c_echo");
    mcpmux_string_free(out);

    out = call_echo(pool, "sync");
    CHECK_CONTAINS(out, "\"text\":\"sync answer\"");
    mcpmux_string_free(out);
    out = call_echo(pool, "object");
    CHECK_CONTAINS(out, "\"structuredContent\":{\"n\":42}");
    mcpmux_string_free(out);
    out = call_echo(pool, "result");
    CHECK_CONTAINS(out, "full result");
    mcpmux_string_free(out);
    out = call_echo(pool, "refuse");
    CHECK_CONTAINS(out, "\"isError\":true");
    CHECK_CONTAINS(out, "nope");
    mcpmux_string_free(out);
    out = call_echo(pool, "bad");
    CHECK_CONTAINS(out, "fixed");
    CHECK(atomic_load(&t.bad_status) == MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(atomic_load(&t.token_status) == MCPMUX_ERR_INVALID_ARGUMENT);
    mcpmux_string_free(out);
    out = call_echo(pool, "thread");
    CHECK_CONTAINS(out, "from a thread");
    mcpmux_string_free(out);
    if (atomic_load(&t.has_thread)) {
        pthread_join(t.thread, NULL);
    }

    /* Arguments are checked against the schema before the handler runs. */
    int before = atomic_load(&t.calls);
    CHECK_STATUS(mcpmux_tools_call(pool, "c_echo", "{\"text\": 5}", NULL, 10000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"isError\":true");
    CHECK_CONTAINS(out, "invalid arguments");
    mcpmux_string_free(out);
    CHECK(atomic_load(&t.calls) == before);

    /* A call cancelled before the host answers: the host is told, a late answer is
     * "not found". */
    waiter w;
    waiter_init(&w);
    mcpmux_request_id rid = 0;
    CHECK_STATUS(mcpmux_tools_call_async(pool, "c_echo", "{\"text\": \"x\", \"mode\": \"never\"}", NULL,
                                         0, NULL, on_complete, &w, &rid),
                 MCPMUX_OK);
    for (int i = 0; i < 500 && atomic_load(&t.never) == 0; i++) {
        sleep_ms(10);
    }
    mcpmux_host_request_id never = atomic_load(&t.never);
    CHECK(never != 0);
    CHECK_STATUS(mcpmux_host_request_waiting(never), MCPMUX_OK);
    CHECK_STATUS(mcpmux_cancel(rid), MCPMUX_OK);
    CHECK(waiter_wait(&w, 10000));
    CHECK(w.status == MCPMUX_ERR_CANCELLED);
    CHECK(wait_for(&t.cancels, 1, 5000));
    CHECK(atomic_load(&t.cancelled_id) == never);
    CHECK_STATUS(mcpmux_host_request_waiting(never), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_host_request_respond(never, "\"late\""), MCPMUX_ERR_NOT_FOUND);
    waiter_destroy(&w);

    /* Unregistering frees the user data; the tool is gone. */
    CHECK_STATUS(mcpmux_tools_unregister(pool, "c_echo"), MCPMUX_OK);
    CHECK(wait_for(&t.freed, 2, 5000));
    CHECK_STATUS(mcpmux_tools_unregister(pool, "c_echo"), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_tools_call(pool, "c_echo", "{\"text\": \"x\"}", NULL, 5000, &out),
                 MCPMUX_ERR_NOT_FOUND);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_tools_unregister(pool, NULL), MCPMUX_ERR_NULL_ARGUMENT);

    /* Closing the pool frees what is still registered. */
    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", NULL, echo_schema, on_tool, NULL, &t,
                                       on_tool_free, NULL),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK(atomic_load(&t.freed) == 3);
    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", NULL, echo_schema, on_tool, NULL, &t,
                                       on_tool_free, NULL),
                 MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_tools_unregister(pool, "c_echo"), MCPMUX_ERR_INVALID_HANDLE);
    CHECK(atomic_load(&t.freed) == 3);
}

static const char *weather_recipe =
    "---\n"
    "widget: weather_card\n"
    "description: Shows the weather of a city\n"
    "schema:\n"
    "  type: object\n"
    "  properties:\n"
    "    city: {type: string}\n"
    "  required: [city]\n"
    "---\n"
    "Use it to show the weather.\n";

static void test_recipes(void) {
    mcpmux_pool pool = open_pool();
    char *out = NULL;
    CHECK_STATUS(mcpmux_recipes_register(pool, weather_recipe, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"weather_card\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_recipes_register(pool, "no front matter", &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_recipes_register(pool, NULL, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_recipes_list(pool, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "Shows the weather");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_recipes_get(pool, "weather_card", &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "Use it to show the weather.");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_recipes_get(pool, "nothing", &out), MCPMUX_ERR_NOT_FOUND);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_recipes_search(pool, "weather city", 0, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "weather_card");
    mcpmux_string_free(out);
    /* The recipe tools are host tools. */
    CHECK_STATUS(mcpmux_tools_call(pool, "widget_display",
                                   "{\"name\": \"weather_card\", \"params\": {\"city\": \"Oslo\"}}", NULL,
                                   10000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"isError\":false");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_canvas_get(pool, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "Oslo");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_canvas_get(pool, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_recipes_list(pool, &out), MCPMUX_ERR_INVALID_HANDLE);
}

static void test_conversation(void) {
    mcpmux_pool pool = open_pool();
    if (!add_test_server(pool, "demo", "")) {
        mcpmux_pool_close(pool, 0);
        return;
    }
    char *out = NULL;
    mcpmux_conversation conv = 0;
    CHECK_STATUS(mcpmux_conversation_new(pool, "{\"disabled\": 5}", &conv),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(conv == 0);
    CHECK_STATUS(mcpmux_conversation_new(pool, NULL, &conv), MCPMUX_OK);
    CHECK_STATUS(mcpmux_conversation_tools(conv, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"search_tools\"");
    CHECK_CONTAINS(out, "\"name\":\"demo_mcp_list_tools\"");
    CHECK(out && !strstr(out, "\"name\":\"mcp__demo__echo\""));
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_conversation_call(conv, "demo_mcp_list_tools", NULL, 20000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "echo");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_conversation_activated(conv, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "[]");
    mcpmux_string_free(out);
    waiter w;
    waiter_init(&w);
    AWAIT(&w, mcpmux_conversation_call_async(conv, "mcp__demo__echo", "{\"text\": \"conv\"}",
                                             20000, on_complete, &w, NULL));
    CHECK(w.status == MCPMUX_OK);
    CHECK_CONTAINS(w.json, "\"text\":\"conv\"");
    waiter_destroy(&w);
    CHECK_STATUS(mcpmux_conversation_activated(conv, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "mcp_");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_conversation_tools(conv, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"mcp__demo__echo\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_conversation_call(conv, "mcp__demo__echo", "[", 0, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_conversation_free(conv), MCPMUX_OK);
    CHECK_STATUS(mcpmux_conversation_free(conv), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_conversation_tools(conv, &out), MCPMUX_ERR_INVALID_HANDLE);

    /* A conversation without the demo server does not offer it. */
    CHECK_STATUS(mcpmux_conversation_new(pool, "{\"disabled\": [\"demo\"]}", &conv), MCPMUX_OK);
    CHECK_STATUS(mcpmux_conversation_tools(conv, &out), MCPMUX_OK);
    CHECK(out && !strstr(out, "demo_mcp_list_tools"));
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_conversation_call(conv, "mcp__demo__echo", "{\"text\": \"x\"}", 0, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_conversation_free(conv), MCPMUX_OK);
    /* The pool handle is not a conversation handle. */
    CHECK_STATUS(mcpmux_conversation_tools(pool, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_conversation_new(pool, NULL, &conv), MCPMUX_ERR_INVALID_HANDLE);
}

/* Copies the string value of `"key":"` in `json` into `buf` (empty when absent). */
static void json_string(const char *json, const char *key, char *buf, size_t n) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    buf[0] = '\0';
    const char *at = json ? strstr(json, pattern) : NULL;
    if (!at) return;
    at += strlen(pattern);
    size_t len = strcspn(at, "\"");
    if (len >= n) len = n - 1;
    memcpy(buf, at, len);
    buf[len] = '\0';
}

static void test_serve_http(void) {
    mcpmux_pool served = open_pool();
    if (!add_test_server(served, "demo", "")) {
        mcpmux_pool_close(served, 0);
        return;
    }
    char *out = NULL;
    mcpmux_http_server server = 0;
    /* Mistakes are refused with what to change; no handle is made. */
    CHECK_STATUS(mcpmux_pool_serve_http(served, "{\"addr\": \"localhost\"}", &server),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(server == 0);
    char msg[512];
    mcpmux_last_error_message(msg, sizeof msg, NULL);
    CHECK_CONTAINS(msg, "127.0.0.1:8808");
    CHECK_STATUS(mcpmux_pool_serve_http(served, "{\"addr\": \"0.0.0.0:0\", \"noAuth\": true}",
                                        &server),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_serve_http(served, "{\"port\": 1}", &server),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_serve_http(served, NULL, NULL), MCPMUX_ERR_NULL_ARGUMENT);

    CHECK_STATUS(mcpmux_pool_serve_http(served, "{\"mode\": \"direct\"}", &server), MCPMUX_OK);
    CHECK(server != 0);
    CHECK_STATUS(mcpmux_http_server_info(server, &out), MCPMUX_OK);
    char url[256], token[128];
    json_string(out, "url", url, sizeof url);
    json_string(out, "token", token, sizeof token);
    mcpmux_string_free(out);
    CHECK(strncmp(url, "http://127.0.0.1:", 17) == 0);
    CHECK(strlen(token) == 64);

    /* A second pool is its client: the served tools are `demo__echo`, so `fleet`'s is
       `mcp__fleet__demo__echo`. */
    mcpmux_pool client = open_pool();
    char input[1024];
    snprintf(input, sizeof input,
             "{\"name\": \"fleet\", \"config\": {\"url\": \"%s\","
             " \"headers\": {\"Authorization\": \"Bearer %s\"}}}",
             url, token);
    CHECK_STATUS(mcpmux_servers_add(client, input, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_call(client, "mcp__fleet__demo__echo", "{\"text\": \"served\"}",
                                   NULL, 20000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"text\":\"served\"");
    mcpmux_string_free(out);

    /* Freed: the port is closed when it returns, and the client's next connection fails. */
    CHECK_STATUS(mcpmux_http_server_free(server), MCPMUX_OK);
    CHECK_STATUS(mcpmux_http_server_free(server), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_http_server_info(server, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_http_server_free(0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_servers_disconnect(client, "fleet", 0), MCPMUX_OK);
    CHECK(mcpmux_tools_call(client, "mcp__fleet__demo__echo", "{\"text\": \"x\"}", NULL, 5000,
                            &out) != MCPMUX_OK);
    CHECK(out == NULL);
    /* The pool handle is not a server handle. */
    CHECK_STATUS(mcpmux_http_server_info(served, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_pool_close(client, 0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_close(served, 0), MCPMUX_OK);
}

/* --- a provider implemented in C ------------------------------------------------- */

enum { SCRIPT_TOOLS, SCRIPT_HANG, SCRIPT_BAD_JSON, SCRIPT_REFUSE, SCRIPT_SAMPLE };

typedef struct {
    int script;
    atomic_int turns;
    atomic_int freed;
    atomic_int cancels;
    atomic_ullong hanging;
    atomic_int saw_sum;       /* a later request carried the add tool's result */
    atomic_int saw_host_tool; /* ... and the host tool's */
    atomic_int saw_denied;
    atomic_int saw_sampling; /* a request carried a server's sampling prompt, without tools */
    atomic_int bad_json_status, bad_shape_status;
    char bad_shape_msg[512];
    pthread_t thread;
    atomic_int has_thread;
} provider_ctx;

static const char *first_turn =
    "{\"content\": [{\"type\": \"text\", \"text\": \"Let me add.\"},"
    " {\"type\": \"tool_use\", \"id\": \"call-1\", \"name\": \"mcp__demo__add\","
    " \"input\": {\"a\": 2, \"b\": 40}},"
    " {\"type\": \"tool_use\", \"id\": \"call-2\", \"name\": \"c_shout\","
    " \"input\": {\"text\": \"hey\"}}],"
    " \"stopReason\": \"tool_use\", \"usage\": {\"inputTokens\": 10, \"outputTokens\": 5}}";

static void *final_turn(void *arg) {
    mcpmux_host_request_id id = *(mcpmux_host_request_id *)arg;
    free(arg);
    sleep_ms(20);
    mcpmux_host_request_token(id, "The sum ");
    mcpmux_host_request_token(id, "is 42");
    mcpmux_host_request_respond(
        id, "{\"content\": [{\"type\": \"text\", \"text\": \"The sum is 42\"}],"
            " \"stopReason\": \"end_turn\", \"usage\": {\"inputTokens\": 20, \"outputTokens\": 4}}");
    return NULL;
}

static void on_chat(void *user_data, mcpmux_host_request_id request, const char *json,
                    size_t len) {
    provider_ctx *p = user_data;
    (void)len;
    int turn = atomic_fetch_add(&p->turns, 1) + 1;
    switch (p->script) {
    case SCRIPT_TOOLS:
        if (turn == 1) {
            mcpmux_host_request_respond(request, first_turn); /* answered at once */
        } else {
            if (strstr(json, "\"content\":\"42\"")) {
                atomic_store(&p->saw_sum, 1);
            }
            if (strstr(json, "\"content\":\"HEY\"")) {
                atomic_store(&p->saw_host_tool, 1);
            }
            if (strstr(json, "The user denied the call of 'mcp__demo__add'")) {
                atomic_store(&p->saw_denied, 1);
            }
            /* answered later, from another thread, with streamed text first */
            mcpmux_host_request_id *arg = malloc(sizeof *arg);
            *arg = request;
            pthread_create(&p->thread, NULL, final_turn, arg);
            atomic_store(&p->has_thread, 1);
        }
        break;
    case SCRIPT_HANG:
        atomic_store(&p->hanging, request);
        break;
    case SCRIPT_BAD_JSON:
        atomic_store(&p->bad_json_status, mcpmux_host_request_respond(request, "not json"));
        atomic_store(&p->bad_shape_status,
                     mcpmux_host_request_respond(request, "{\"text\": \"no content\"}"));
        mcpmux_last_error_message(p->bad_shape_msg, sizeof p->bad_shape_msg, NULL);
        mcpmux_host_request_respond(request,
                                    "{\"content\": [{\"type\": \"text\", \"text\": \"fine\"}]}");
        break;
    case SCRIPT_REFUSE:
        mcpmux_host_request_refuse(request, "model offline");
        break;
    case SCRIPT_SAMPLE:
        if (strstr(json, "Say hi") && strstr(json, "\"tools\":[]")) {
            atomic_store(&p->saw_sampling, 1);
        }
        mcpmux_host_request_respond(
            request, "{\"content\": [{\"type\": \"text\", \"text\": \"hi from C\"}]}");
        break;
    }
}

static void on_chat_cancel(void *user_data, mcpmux_host_request_id request) {
    provider_ctx *p = user_data;
    (void)request;
    atomic_fetch_add(&p->cancels, 1);
}

static void on_provider_free(void *user_data) {
    provider_ctx *p = user_data;
    atomic_fetch_add(&p->freed, 1);
}

static void provider_join(provider_ctx *p) {
    if (atomic_exchange(&p->has_thread, 0)) {
        pthread_join(p->thread, NULL);
    }
}

/* A run's user data: the waiter first (on_complete casts to it), then the rest. */
typedef struct {
    waiter w;
    const char *approval; /* answer to approval questions; NULL: refuse */
    atomic_int approvals;
    pthread_mutex_t mu;
    char tokens[256];
} run_ctx;

static void run_init(run_ctx *r, const char *approval) {
    waiter_init(&r->w);
    r->approval = approval;
    atomic_store(&r->approvals, 0);
    pthread_mutex_init(&r->mu, NULL);
    r->tokens[0] = '\0';
}

static void run_destroy(run_ctx *r) {
    waiter_destroy(&r->w);
    pthread_mutex_destroy(&r->mu);
}

static void on_run_token(void *user_data, const char *text, size_t len) {
    run_ctx *r = user_data;
    pthread_mutex_lock(&r->mu);
    size_t have = strlen(r->tokens);
    if (have + len < sizeof r->tokens) {
        memcpy(r->tokens + have, text, len + 1);
    }
    pthread_mutex_unlock(&r->mu);
}

static void on_run_approve(void *user_data, mcpmux_host_request_id request, const char *json,
                           size_t len) {
    run_ctx *r = user_data;
    (void)len;
    if (strstr(json, "\"toolId\":\"mcp__demo__add\"")) {
        atomic_fetch_add(&r->approvals, 1);
    }
    if (r->approval) {
        mcpmux_host_request_respond(request, r->approval);
    } else {
        mcpmux_host_request_refuse(request, NULL);
    }
}

static const char *shout_schema =
    "{\"type\": \"object\", \"properties\": {\"text\": {\"type\": \"string\"}}}";

/* A pool with the test server (its tools listed, so the agent knows whose they are) and
 * the host tool c_shout. */
static mcpmux_pool agent_pool(tool_ctx *t) {
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "demo", "");
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_list(pool, "demo", NULL, 20000, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_register(pool, "c_shout", "Shout", shout_schema, on_tool, NULL, t,
                                       NULL, NULL),
                 MCPMUX_OK);
    return pool;
}

static mcpmux_agent new_agent(mcpmux_pool pool, provider_ctx *p, mcpmux_provider *out_provider) {
    mcpmux_provider provider = 0;
    CHECK_STATUS(mcpmux_provider_new_host("c-llm", "m1", on_chat, on_chat_cancel, p,
                                          on_provider_free, &provider),
                 MCPMUX_OK);
    mcpmux_agent agent = 0;
    CHECK_STATUS(mcpmux_agent_new(pool, provider, "{\"maxIterations\": 4}", &agent), MCPMUX_OK);
    *out_provider = provider;
    return agent;
}

static void test_agent_host_provider(void) {
    static tool_ctx t;
    memset(&t, 0, sizeof t);
    mcpmux_pool pool = agent_pool(&t);
    static provider_ctx p;
    memset(&p, 0, sizeof p);
    p.script = SCRIPT_TOOLS;
    mcpmux_provider provider = 0;
    mcpmux_agent agent = new_agent(pool, &p, &provider);
    char *out = NULL;
    CHECK_STATUS(mcpmux_provider_info(provider, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"model\":\"m1\"");
    mcpmux_string_free(out);

    run_ctx r;
    run_init(&r, "\"once\"");
    mcpmux_request_id rid = 0;
    AWAIT(&r.w, mcpmux_agent_run(agent, "What is 2 + 40?", NULL, on_run_token, on_run_approve,
                                 on_complete, &r, &rid));
    provider_join(&p);
    CHECK(r.w.status == MCPMUX_OK);
    CHECK_CONTAINS(r.w.json, "\"text\":\"The sum is 42\"");
    CHECK_CONTAINS(r.w.json, "\"stop\":\"finished\"");
    CHECK_CONTAINS(r.w.json, "\"iterations\":2");
    CHECK_CONTAINS(r.w.json, "\"inputTokens\":30");
    CHECK(atomic_load(&p.saw_sum) == 1);
    CHECK(atomic_load(&p.saw_host_tool) == 1);
    CHECK(atomic_load(&r.approvals) == 1);
    CHECK_CONTAINS(r.tokens, "The sum is 42");
    CHECK_STATUS(mcpmux_cancel(rid), MCPMUX_ERR_NOT_FOUND);
    run_destroy(&r);

    /* The blocking variant, with the model switched. */
    CHECK_STATUS(mcpmux_agent_set_model(agent, "m2"), MCPMUX_OK);
    CHECK_STATUS(mcpmux_agent_info(agent, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"model\":\"m2\"");
    CHECK_CONTAINS(out, "\"provider\":\"c-llm\"");
    CHECK_CONTAINS(out, "systemPrompt");
    mcpmux_string_free(out);
    atomic_store(&p.turns, 0);
    run_init(&r, "\"always\"");
    CHECK_STATUS(mcpmux_agent_run_wait(agent, "Again?", "{\"history\": []}", NULL, on_run_approve,
                                       &r, 30000, &out),
                 MCPMUX_OK);
    provider_join(&p);
    CHECK_CONTAINS(out, "The sum is 42");
    mcpmux_string_free(out);
    CHECK(atomic_load(&r.approvals) == 1);
    run_destroy(&r);

    /* The handles are independent; the provider's user data goes with the last of them. */
    CHECK_STATUS(mcpmux_provider_free(provider), MCPMUX_OK);
    CHECK_STATUS(mcpmux_provider_free(provider), MCPMUX_ERR_INVALID_HANDLE);
    CHECK(atomic_load(&p.freed) == 0);
    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
    CHECK(wait_for(&p.freed, 1, 5000));
    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_agent_set_model(agent, "m3"), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

/* Counts sampling approvals and answers them with `r->approval` (NULL: refuse). */
static void on_sampling_approve(void *user_data, mcpmux_host_request_id request,
                                const char *json, size_t len) {
    run_ctx *r = user_data;
    (void)len;
    if (strstr(json, "\"toolId\":\"sampling/createMessage\"") && strstr(json, "Say hi")) {
        atomic_fetch_add(&r->approvals, 1);
    }
    if (r->approval) {
        mcpmux_host_request_respond(request, r->approval);
    } else {
        mcpmux_host_request_refuse(request, NULL);
    }
}

static void test_agent_handles_sampling(void) {
    static tool_ctx t;
    memset(&t, 0, sizeof t);
    mcpmux_pool pool = agent_pool(&t);
    static provider_ctx p;
    memset(&p, 0, sizeof p);
    p.script = SCRIPT_SAMPLE;
    mcpmux_provider provider = 0;
    mcpmux_agent agent = new_agent(pool, &p, &provider);
    mcpmux_provider_free(provider);
    CHECK_STATUS(mcpmux_agent_handle_sampling(0, NULL, NULL, NULL), MCPMUX_ERR_INVALID_HANDLE);

    /* The test server's `ask` tool samples through an input round: the C provider answers. */
    static run_ctx r;
    run_init(&r, "\"once\"");
    CHECK_STATUS(mcpmux_agent_handle_sampling(agent, on_sampling_approve, &r, NULL), MCPMUX_OK);
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__demo__ask", "{}", NULL, 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "sample=\\\"hi from C\\\"");
    mcpmux_string_free(out);
    CHECK(atomic_load(&p.saw_sampling) == 1);
    CHECK(atomic_load(&r.approvals) == 1);

    /* A denied approval refuses the server: its tool fails, and the model is not asked. */
    r.approval = "\"deny\"";
    atomic_store(&p.turns, 0);
    out = NULL;
    CHECK(mcpmux_tools_call(pool, "mcp__demo__ask", "{}", NULL, 20000, &out) != MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK(atomic_load(&p.turns) == 0);
    CHECK(atomic_load(&r.approvals) == 2);

    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    run_destroy(&r);
}

static void test_agent_approval_deny(void) {
    static tool_ctx t;
    memset(&t, 0, sizeof t);
    mcpmux_pool pool = agent_pool(&t);
    static provider_ctx p;
    memset(&p, 0, sizeof p);
    p.script = SCRIPT_TOOLS;
    mcpmux_provider provider = 0;
    mcpmux_agent agent = new_agent(pool, &p, &provider);
    mcpmux_provider_free(provider);

    run_ctx r;
    run_init(&r, "\"deny\"");
    AWAIT(&r.w, mcpmux_agent_run(agent, "What is 2 + 40?", NULL, NULL, on_run_approve,
                                 on_complete, &r, NULL));
    provider_join(&p);
    CHECK(r.w.status == MCPMUX_OK);
    CHECK(atomic_load(&r.approvals) == 1);
    CHECK(atomic_load(&p.saw_denied) == 1);
    CHECK(atomic_load(&p.saw_sum) == 0);
    CHECK(atomic_load(&p.saw_host_tool) == 1); /* host tools need no approval */
    run_destroy(&r);

    /* Refusing is denying; so is having no approval callback. */
    atomic_store(&p.turns, 0);
    atomic_store(&p.saw_denied, 0);
    run_init(&r, NULL);
    AWAIT(&r.w, mcpmux_agent_run(agent, "What is 2 + 40?", NULL, NULL, on_run_approve,
                                 on_complete, &r, NULL));
    provider_join(&p);
    CHECK(atomic_load(&p.saw_denied) == 1);
    run_destroy(&r);
    atomic_store(&p.turns, 0);
    atomic_store(&p.saw_denied, 0);
    run_init(&r, NULL);
    AWAIT(&r.w, mcpmux_agent_run(agent, "What is 2 + 40?", NULL, NULL, NULL, on_complete, &r,
                                 NULL));
    provider_join(&p);
    CHECK(atomic_load(&p.saw_denied) == 1);
    CHECK(atomic_load(&p.saw_sum) == 0);
    run_destroy(&r);

    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
    CHECK(wait_for(&p.freed, 1, 5000));
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

static void test_agent_cancel(void) {
    mcpmux_pool pool = open_pool();
    static provider_ctx p;
    memset(&p, 0, sizeof p);
    p.script = SCRIPT_HANG;
    mcpmux_provider provider = 0;
    mcpmux_agent agent = new_agent(pool, &p, &provider);

    run_ctx r;
    run_init(&r, NULL);
    mcpmux_request_id rid = 0;
    CHECK_STATUS(mcpmux_agent_run(agent, "Wait forever", NULL, on_run_token, NULL, on_complete,
                                  &r, &rid),
                 MCPMUX_OK);
    for (int i = 0; i < 1000 && atomic_load(&p.hanging) == 0; i++) {
        sleep_ms(10);
    }
    mcpmux_host_request_id hanging = atomic_load(&p.hanging);
    CHECK(hanging != 0);
    CHECK_STATUS(mcpmux_host_request_waiting(hanging), MCPMUX_OK);
    CHECK_STATUS(mcpmux_host_request_token(hanging, "partial "), MCPMUX_OK);
    CHECK_STATUS(mcpmux_cancel(rid), MCPMUX_OK);
    CHECK(waiter_wait(&r.w, 10000));
    CHECK(r.w.status == MCPMUX_OK);
    CHECK_CONTAINS(r.w.json, "\"stop\":\"cancelled\"");
    CHECK_CONTAINS(r.w.json, "Wait forever"); /* the transcript so far */
    CHECK_CONTAINS(r.tokens, "partial ");
    CHECK(wait_for(&p.cancels, 1, 5000));
    CHECK_STATUS(mcpmux_host_request_waiting(hanging), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_host_request_respond(hanging, "{\"content\": []}"), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_host_request_token(hanging, "late"), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_cancel(rid), MCPMUX_ERR_NOT_FOUND);
    run_destroy(&r);

    /* The blocking variant's timeout abandons the run; the host is told too. */
    atomic_store(&p.hanging, 0);
    char *out = NULL;
    CHECK_STATUS(mcpmux_agent_run_wait(agent, "Wait", NULL, NULL, NULL, NULL, 300, &out),
                 MCPMUX_ERR_TIMEOUT);
    CHECK(out == NULL);
    CHECK(wait_for(&p.cancels, 2, 5000));

    /* Closing the pool ends a run that is waiting. */
    run_init(&r, NULL);
    atomic_store(&p.hanging, 0);
    CHECK_STATUS(mcpmux_agent_run(agent, "Wait", NULL, NULL, NULL, on_complete, &r, NULL),
                 MCPMUX_OK);
    for (int i = 0; i < 1000 && atomic_load(&p.hanging) == 0; i++) {
        sleep_ms(10);
    }
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK(r.w.done == 1);
    CHECK(r.w.status == MCPMUX_ERR_SHUTTING_DOWN);
    CHECK(wait_for(&p.cancels, 3, 5000));
    run_destroy(&r);
    CHECK_STATUS(mcpmux_agent_run(agent, "x", NULL, NULL, NULL, on_complete, &r, NULL),
                 MCPMUX_ERR_SHUTTING_DOWN);
    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
    CHECK_STATUS(mcpmux_provider_free(provider), MCPMUX_OK);
    CHECK(wait_for(&p.freed, 1, 5000));
}

static void test_agent_bad_json(void) {
    mcpmux_provider provider = 0;
    char msg[512];
    /* Provider configs. */
    CHECK_STATUS(mcpmux_provider_create("{", &provider), MCPMUX_ERR_INVALID_ARGUMENT);
    mcpmux_last_error_message(msg, sizeof msg, NULL);
    CHECK_CONTAINS(msg, "config_json");
    CHECK_STATUS(mcpmux_provider_create("{\"type\": \"nope\", \"model\": \"m\"}", &provider),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_provider_create("{\"type\": \"openai\"}", &provider),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    mcpmux_last_error_message(msg, sizeof msg, NULL);
    CHECK_CONTAINS(msg, "model");
    CHECK(provider == 0);
    CHECK_STATUS(mcpmux_provider_create(NULL, &provider), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_provider_create("{}", NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_provider_create("{\"type\": \"openai\", \"model\": \"gpt-x\","
                                        " \"baseUrl\": \"http://127.0.0.1:9/v1\"}",
                                        &provider),
                 MCPMUX_OK);
    char *out = NULL;
    CHECK_STATUS(mcpmux_provider_info(provider, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"model\":\"gpt-x\"");
    mcpmux_string_free(out);
    mcpmux_provider unused = 0;
    CHECK_STATUS(mcpmux_provider_new_host(NULL, NULL, NULL, NULL, NULL, NULL, &unused),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK(unused == 0);
    CHECK_STATUS(mcpmux_provider_new_host(NULL, NULL, on_chat, NULL, NULL, NULL, NULL),
                 MCPMUX_ERR_NULL_ARGUMENT);

    mcpmux_pool pool = open_pool();
    mcpmux_agent agent = 0;
    /* Agent options. */
    CHECK_STATUS(mcpmux_agent_new(pool, provider, "{\"maxIterations\": \"many\"}", &agent),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_new(pool, provider, "{\"colour\": 1}", &agent),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    mcpmux_last_error_message(msg, sizeof msg, NULL);
    CHECK_CONTAINS(msg, "colour");
    CHECK(agent == 0);
    CHECK_STATUS(mcpmux_agent_new(pool, pool, NULL, &agent), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_agent_new(provider, provider, NULL, &agent), MCPMUX_ERR_INVALID_HANDLE);
    mcpmux_provider_free(provider);

    static provider_ctx p;
    memset(&p, 0, sizeof p);
    p.script = SCRIPT_BAD_JSON;
    agent = new_agent(pool, &p, &provider);
    mcpmux_provider_free(provider);
    /* Run params. */
    waiter w;
    waiter_init(&w);
    CHECK_STATUS(mcpmux_agent_run(agent, "hi", "{", NULL, NULL, on_complete, &w, NULL),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    mcpmux_last_error_message(msg, sizeof msg, NULL);
    CHECK_CONTAINS(msg, "params_json");
    CHECK_STATUS(mcpmux_agent_run(agent, "hi", "{\"servers\": {\"enabled\": 3}}", NULL, NULL,
                                  on_complete, &w, NULL),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_run(agent, "\xff", NULL, NULL, NULL, on_complete, &w, NULL),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_run(agent, NULL, NULL, NULL, NULL, on_complete, &w, NULL),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_run(agent, "hi", NULL, NULL, NULL, NULL, &w, NULL),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_run(pool, "hi", NULL, NULL, NULL, on_complete, &w, NULL),
                 MCPMUX_ERR_INVALID_HANDLE);
    CHECK(w.done == 0);
    /* The provider's answers: bad JSON and a bad shape are refused, the request waits. */
    AWAIT(&w, mcpmux_agent_run(agent, "hi", NULL, NULL, NULL, on_complete, &w, NULL));
    CHECK(w.status == MCPMUX_OK);
    CHECK_CONTAINS(w.json, "\"text\":\"fine\"");
    CHECK(atomic_load(&p.bad_json_status) == MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(atomic_load(&p.bad_shape_status) == MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(p.bad_shape_msg, "invalid response");
    waiter_destroy(&w);
    /* A provider that refuses fails the run with its reason. */
    p.script = SCRIPT_REFUSE;
    waiter_init(&w);
    AWAIT(&w, mcpmux_agent_run(agent, "hi", NULL, NULL, NULL, on_complete, &w, NULL));
    CHECK(w.status == MCPMUX_ERR_CONNECTION);
    CHECK_CONTAINS(w.json, "model offline");
    waiter_destroy(&w);

    CHECK_STATUS(mcpmux_agent_set_model(agent, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_info(agent, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
    CHECK(wait_for(&p.freed, 1, 5000));
    CHECK_STATUS(mcpmux_agent_free(0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_provider_free(0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_conversation_free(0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_host_request_token(12345678, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_host_request_token(12345678, "x"), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_host_request_waiting(12345678), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

/* ---------------------------------------------------------------------------------- */
/* OAuth: the authorization handler, token stores, logout (the full round trip against */
/* an authorization server runs in tests/c/oauth_client.c under the conformance suite) */
/* ---------------------------------------------------------------------------------- */

static void on_authorize_unused(void *user_data, mcpmux_host_request_id request,
                                const char *json, size_t len) {
    (void)user_data;
    (void)json;
    (void)len;
    mcpmux_host_request_refuse(request, "not in this test");
}

static void test_oauth_handler(void) {
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

static void test_oauth_token_store(void) {
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

static void test_oauth_token_file(void) {
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

static void cleanup_tmp(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0) {
        fprintf(stderr, "could not remove %s\n", tmp_root);
    }
}

int main(void) {
    /* Before anything else: it must be the first call on this thread. */
    test_case first = {"last_error_message", test_last_error_message};
    test_case tests[] = {
        {"version_and_status_names", test_version_and_status_names},
        {"null_arguments", test_null_arguments},
        {"invalid_handles", test_invalid_handles},
        {"invalid_json_and_utf8", test_invalid_json_and_utf8},
        {"default_options", test_default_options},
        {"servers_crud", test_servers_crud},
        {"server_operations", test_server_operations},
        {"tools", test_tools},
        {"progress", test_progress},
        {"cancel", test_cancel},
        {"many_concurrent_calls", test_many_concurrent_calls},
        {"blocking_callbacks_do_not_stall", test_blocking_callbacks_do_not_stall},
        {"events", test_events},
        {"close_from_callbacks", test_close_from_callbacks},
        {"close_drains", test_close_drains},
        {"close_while_threads_call", test_close_while_threads_call},
        {"resources_and_prompts", test_resources_and_prompts},
        {"input_rounds", test_input_rounds},
        {"server_changes", test_server_changes},
        {"list_refresh", test_list_refresh},
        {"url_elicitation", test_url_elicitation},
        {"sampling_with_tools", test_sampling_with_tools},
        {"methods_by_name", test_methods_by_name},
        {"call_options", test_call_options},
        {"server_killed", test_server_killed},
        {"roots", test_roots},
        {"host_request_misuse", test_host_request_misuse},
        {"server_everything", test_server_everything},
        {"skills", test_skills},
        {"tasks", test_tasks},
        {"apps", test_apps},
        {"message_too_large", test_message_too_large},
        {"agent_on_a_fresh_config", test_agent_on_a_fresh_config},
        {"agent_approval_policy", test_agent_approval_policy},
        {"host_tools", test_host_tools},
        {"host_answer_contract", test_host_answer_contract},
        {"recipes", test_recipes},
        {"conversation", test_conversation},
        {"serve_http", test_serve_http},
        {"agent_host_provider", test_agent_host_provider},
        {"agent_handles_sampling", test_agent_handles_sampling},
        {"agent_approval_deny", test_agent_approval_deny},
        {"agent_cancel", test_agent_cancel},
        {"agent_bad_json", test_agent_bad_json},
        {"oauth_handler", test_oauth_handler},
        {"oauth_token_store", test_oauth_token_store},
        {"oauth_token_file", test_oauth_token_file},
    };
    if (!test_server() || access(test_server(), X_OK) != 0) {
        fprintf(stderr, "MCPMUX_TEST_SERVER must name the mcpmux-test-server binary\n");
        printf("0 passed, 1 failed\n");
        return 1;
    }
    snprintf(tmp_root, sizeof tmp_root, "%s/mcpmux-c-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    const char *filter = getenv("MCPMUX_C_TEST_FILTER");
    int passed = 0, failed = 0, skips = 0;
    size_t n = sizeof tests / sizeof tests[0];
    for (size_t i = 0; i <= n; i++) {
        test_case *t = i == 0 ? &first : &tests[i - 1];
        if (filter && !strstr(t->name, filter)) {
            continue;
        }
        current_failed = 0;
        skipped = 0;
        double start = now_s();
        t->fn();
        printf("%s %s (%.2f s)%s\n", current_failed ? "FAIL" : "ok  ", t->name, now_s() - start,
               skipped ? " [skipped]" : "");
        fflush(stdout);
        if (current_failed) {
            failed++;
        } else if (skipped) {
            skips++;
        } else {
            passed++;
        }
    }
    cleanup_tmp();
    if (skips) {
        printf("%d skipped\n", skips);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
