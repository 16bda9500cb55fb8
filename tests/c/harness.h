/*
 * The shared part of libmcpmux's C tests, run against real MCP servers: the checks, the
 * fixtures and callbacks that tests of several subjects use, and the list of the tests.
 * Each subject has its file, tests/c/test_<subject>.c; harness.c runs them all in one
 * program, in one order (its table), and closes with "N passed, N failed".
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
#ifndef MCPMUX_C_TESTS_HARNESS_H
#define MCPMUX_C_TESTS_HARNESS_H

/* Before any system header: every file of the tests includes this one first. */
#define _POSIX_C_SOURCE 200809L

#include "mcpmux.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* A tiny harness: a failed CHECK marks the current test failed and carries on.        */
/* ---------------------------------------------------------------------------------- */

/* Set by a failed check; the runner clears it before each test. */
extern int current_failed;

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

/* Marks the current test skipped (failed when MCPMUX_REQUIRE_SERVERS=1), saying why. */
void skip(const char *why);
/* Seconds on the monotonic clock. */
double now_s(void);
void sleep_ms(long ms);

/* ---------------------------------------------------------------------------------- */
/* Fixtures                                                                             */
/* ---------------------------------------------------------------------------------- */

/* The run's temp folder (removed at the end), and a counter for unique names in it. */
extern char tmp_root[256];
extern int tmp_counter;

/* A fresh config file path in the run's temp folder. */
void config_path(char *buf, size_t n);
/* Opens a pool over a fresh config with `extra` options (JSON members, may be ""); servers
 * connect only when used. */
mcpmux_pool open_pool_with(const char *extra);
mcpmux_pool open_pool(void);
const char *test_server(void);
/* Adds the test server under `name` (extra args as a JSON array body, may be ""). */
int add_test_server(mcpmux_pool pool, const char *name, const char *args);
/* Calls `tool` with `args`, checking that it succeeds. */
void call_tool_ok(mcpmux_pool pool, const char *tool, const char *args);
/* server-everything's entry script (MCPMUX_EVERYTHING_JS), or NULL after skip() when it
 * is missing. */
const char *everything_js(void);

/* Waits for one completion callback and keeps what it received. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    mcpmux_status status;
    char *json;
} waiter;

void waiter_init(waiter *w);
void waiter_destroy(waiter *w);
/* The completion callback: `user_data` is a waiter (or a struct that starts with one). */
void on_complete(void *user_data, mcpmux_status status, const char *json, size_t len);
/* Returns 0 when no callback came within `ms`. */
int waiter_wait(waiter *w, long ms);

/* Runs an async call (already started with `w` as user data) to completion. */
#define AWAIT(w, call)                                                                 \
    do {                                                                               \
        CHECK_STATUS((call), MCPMUX_OK);                                               \
        CHECK(waiter_wait((w), 30000));                                                \
    } while (0)

/* Progress of one call: its own callback, with the call's user data, never after the
 * completion. */
typedef struct {
    waiter w;
    atomic_int progress, after_done;
    char last[256];
} progress_log;

void progress_log_init(progress_log *l);
void on_progress(void *user_data, const char *json, size_t len);
void on_progress_done(void *user_data, mcpmux_status status, const char *json, size_t len);

/* Events of a subscription, counted; the callback may close a pool or end the
 * subscription. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int events, tool_called, other, freed;
    mcpmux_pool close_me; /* when set, the event callback closes this pool */
    mcpmux_subscription_id unsubscribe_me; /* when set, the callback ends this subscription */
    mcpmux_status unsubscribe_status;
    mcpmux_status close_status;
} event_log;

void event_log_init(event_log *l);
void on_event(void *user_data, const char *json, size_t len);
void on_event_free(void *user_data);
/* Waits until `*field >= want` (read under `mu`, signalled on `cv`) or `ms` pass. */
int counter_wait(pthread_mutex_t *mu, pthread_cond_t *cv, int *field, int want, long ms);
int event_wait(event_log *l, int *field, int want, long ms);

/* Events of one name (a filtered subscription), counted, with the last one kept. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int count;
    char last[512];
} named_events;

/* Subscribes `e` to the events called `name`. */
mcpmux_subscription_id named_events_on(mcpmux_pool pool, const char *name, named_events *e);
/* Waits (2 s at most: no cache TTL is waited for) for the `want`th event; whether it came. */
int named_events_wait(named_events *e, int want);

/* Host handlers for sampling and elicitation (server-everything's tools among others). */
typedef struct {
    atomic_int calls, freed;
    mcpmux_status bad_json, good, again;
    char request[2048];
} host_log;

/* Answers a sampling request inside the handler, after a wrong answer and before a late
 * one. */
void on_sampling(void *user_data, mcpmux_host_request_id request, const char *json,
                 size_t len);
/* Accepts an elicitation from another thread, a little later, as a host showing a form
 * would. */
void on_elicitation(void *user_data, mcpmux_host_request_id request, const char *json,
                    size_t len);
void on_host_free(void *user_data);

/* A host tool's user data: c_echo's modes (the host tools' test) and c_shout (the agents'
 * tests). */
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

/* c_echo: what it answers depends on the "mode" argument; c_shout answers "HEY". */
void on_tool(void *user_data, mcpmux_host_request_id request, const char *json, size_t len);
/* Waits until `*v >= at_least` or `ms` pass; whether it is. */
int wait_for(atomic_int *v, int at_least, long ms);

/* ---------------------------------------------------------------------------------- */
/* The tests, by file (harness.c's table runs them, in its own order)                  */
/* ---------------------------------------------------------------------------------- */

/* test_errors.c */
void test_version_and_status_names(void);
void test_last_error_message(void);
void test_null_arguments(void);
void test_invalid_handles(void);
void test_invalid_json_and_utf8(void);
/* test_pool.c */
void test_default_options(void);
void test_many_concurrent_calls(void);
void test_blocking_callbacks_do_not_stall(void);
void test_close_from_callbacks(void);
void test_close_drains(void);
void test_close_while_threads_call(void);
/* test_servers.c */
void test_servers_crud(void);
void test_server_operations(void);
void test_server_killed(void);
void test_roots(void);
/* test_calls.c */
void test_tools(void);
void test_progress(void);
void test_cancel(void);
void test_list_refresh(void);
void test_methods_by_name(void);
void test_call_options(void);
void test_message_too_large(void);
/* test_resources_and_prompts.c */
void test_resources_and_prompts(void);
/* test_events.c */
void test_events(void);
void test_server_changes(void);
/* test_sampling_and_elicitation.c */
void test_input_rounds(void);
void test_url_elicitation(void);
void test_sampling_with_tools(void);
void test_host_request_misuse(void);
/* test_server_everything.c */
void test_server_everything(void);
/* test_skills.c */
void test_skills(void);
/* test_sandbox.c */
void test_sandbox(void);

/* test_tasks.c */
void test_tasks(void);
void test_task_run(void);
/* test_apps.c */
void test_apps(void);
/* test_agent_openai.c */
void test_agent_on_a_fresh_config(void);
void test_agent_approval_policy(void);
/* test_host_tools.c */
void test_host_tools(void);
void test_host_answer_contract(void);
/* test_recipes.c */
void test_recipes(void);
/* test_conversation.c */
void test_conversation(void);
/* test_serve.c */
void test_serve_http(void);
/* test_agent.c */
void test_agent_host_provider(void);
void test_agent_handles_sampling(void);
void test_agent_approval_deny(void);
void test_agent_cancel(void);
void test_agent_bad_json(void);
/* test_oauth.c */
void test_oauth_handler(void);
void test_oauth_token_store(void);
void test_oauth_token_file(void);

#endif
