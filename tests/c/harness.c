/*
 * The C tests' harness (harness.h says what each piece is) and their runner: main runs
 * the tests of every tests/c/test_*.c in the order of its table, MCPMUX_C_TEST_FILTER
 * choosing which.
 */
#include "harness.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------- */
/* Checks                                                                             */
/* ---------------------------------------------------------------------------------- */

int current_failed;

static int skipped;

void skip(const char *why) {
    const char *req = getenv("MCPMUX_REQUIRE_SERVERS");
    if (req && strcmp(req, "1") == 0) {
        fprintf(stderr, "  required dependency missing: %s\n", why);
        current_failed = 1;
    } else {
        fprintf(stderr, "  SKIP: %s\n", why);
        skipped = 1;
    }
}

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

/* ---------------------------------------------------------------------------------- */
/* Fixtures                                                                           */
/* ---------------------------------------------------------------------------------- */

char tmp_root[256];
int tmp_counter;

void config_path(char *buf, size_t n) {
    snprintf(buf, n, "%s/servers-%d.json", tmp_root, ++tmp_counter);
}

mcpmux_pool open_pool_with(const char *extra) {
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

mcpmux_pool open_pool(void) { return open_pool_with(""); }

const char *test_server(void) { return getenv("MCPMUX_TEST_SERVER"); }

int add_test_server(mcpmux_pool pool, const char *name, const char *args) {
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

void waiter_init(waiter *w) {
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->done = 0;
    w->status = -1;
    w->json = NULL;
}

void waiter_destroy(waiter *w) {
    free(w->json);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
}

void on_complete(void *user_data, mcpmux_status status, const char *json, size_t len) {
    waiter *w = user_data;
    pthread_mutex_lock(&w->mu);
    w->status = status;
    w->json = malloc(len + 1);
    memcpy(w->json, json, len + 1);
    w->done++;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

int waiter_wait(waiter *w, long ms) {
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

/* ---------------------------------------------------------------------------------- */
/* Callbacks: completions, progress, events, host requests, host tools                */
/* ---------------------------------------------------------------------------------- */

void progress_log_init(progress_log *l) {
    memset(l, 0, sizeof *l);
    waiter_init(&l->w);
    atomic_init(&l->progress, 0);
    atomic_init(&l->after_done, 0);
}

void on_progress(void *user_data, const char *json, size_t len) {
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

void on_progress_done(void *user_data, mcpmux_status status, const char *json,
                      size_t len) {
    progress_log *l = user_data;
    on_complete(&l->w, status, json, len);
}

void event_log_init(event_log *l) {
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    l->close_status = -1;
}

void on_event(void *user_data, const char *json, size_t len) {
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

void on_event_free(void *user_data) {
    event_log *l = user_data;
    pthread_mutex_lock(&l->mu);
    l->freed++;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

int counter_wait(pthread_mutex_t *mu, pthread_cond_t *cv, int *field, int want, long ms) {
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

int event_wait(event_log *l, int *field, int want, long ms) {
    return counter_wait(&l->mu, &l->cv, field, want, ms);
}

static void on_named_event(void *user_data, const char *json, size_t len) {
    named_events *e = user_data;
    pthread_mutex_lock(&e->mu);
    e->count++;
    snprintf(e->last, sizeof e->last, "%.*s", (int)len, json);
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

mcpmux_subscription_id named_events_on(mcpmux_pool pool, const char *name,
                                       named_events *e) {
    memset(e, 0, sizeof *e);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    mcpmux_subscription_id id = 0;
    CHECK_STATUS(mcpmux_events_subscribe(pool, name, on_named_event, e, NULL, &id), MCPMUX_OK);
    return id;
}

int named_events_wait(named_events *e, int want) {
    return counter_wait(&e->mu, &e->cv, &e->count, want, 2000);
}

void call_tool_ok(mcpmux_pool pool, const char *tool, const char *args) {
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_call(pool, tool, args, NULL, 20000, &out), MCPMUX_OK);
    mcpmux_string_free(out);
}

void on_sampling(void *user_data, mcpmux_host_request_id request, const char *json,
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

void on_elicitation(void *user_data, mcpmux_host_request_id request, const char *json,
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

void on_host_free(void *user_data) {
    host_log *l = user_data;
    atomic_fetch_add(&l->freed, 1);
}

static void *tool_answer_later(void *arg) {
    mcpmux_host_request_id id = *(mcpmux_host_request_id *)arg;
    free(arg);
    sleep_ms(50);
    mcpmux_host_request_respond(id, "\"from a thread\"");
    return NULL;
}

void on_tool(void *user_data, mcpmux_host_request_id request, const char *json,
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

int wait_for(atomic_int *v, int at_least, long ms) {
    for (long waited = 0; waited < ms; waited += 10) {
        if (atomic_load(v) >= at_least) {
            return 1;
        }
        sleep_ms(10);
    }
    return atomic_load(v) >= at_least;
}

const char *everything_js(void) {
    const char *js = getenv("MCPMUX_EVERYTHING_JS");
    if (!js || access(js, R_OK) != 0) {
        skip("server-everything (run scripts/test-deps.sh)");
        return NULL;
    }
    return js;
}

/* ---------------------------------------------------------------------------------- */
/* The runner                                                                         */
/* ---------------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    void (*fn)(void);
} test_case;

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
        {"sandbox", test_sandbox},
        {"host_request_misuse", test_host_request_misuse},
        {"server_everything", test_server_everything},
        {"skills", test_skills},
        {"tasks", test_tasks},
        {"task_run", test_task_run},
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
