/* Tool calls: listing and calling, progress, cancelling, fresh lists, methods by name, a
 * call's options, and a reply over maxMessageBytes. */
#include "harness.h"

void test_tools(void) {
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

void test_progress(void) {
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

void test_cancel(void) {
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

/* A list call with {"refresh": true} asks the server again: a tool the server added without
 * saying so is missing from the cached list and in the fresh one. Bad options are refused. */
void test_list_refresh(void) {
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

/* Methods mcpmux has no call for go through by name: a request and its result, a
 * notification, and the server's own notification back as a `notification` event. */
void test_methods_by_name(void) {
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
void test_call_options(void) {
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

/* A reply over maxMessageBytes is its own status, with a message that says what to raise;
 * the connection reopens for the next call. */
void test_message_too_large(void) {
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
