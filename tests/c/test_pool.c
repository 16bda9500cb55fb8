/* A pool's life: opened with the default options, many calls at once, callbacks that block,
 * and closing it (from its own callbacks, draining what runs, while threads call). */
#include "harness.h"

#include <time.h>

void test_default_options(void) {
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

void test_many_concurrent_calls(void) {
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
void test_blocking_callbacks_do_not_stall(void) {
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

void test_close_from_callbacks(void) {
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

void test_close_drains(void) {
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
void test_close_while_threads_call(void) {
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
