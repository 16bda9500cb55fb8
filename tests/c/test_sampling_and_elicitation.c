/* Requests of servers to the host: elicitation (input rounds, URL elicitation), sampling
 * with tools, and misuse of host requests and their handlers. */
#include "harness.h"

/* A 2026-07-28 server may answer prompts/get and resources/read with input_required: the
 * host's elicitation handler answers (here from another thread, later) and the request
 * completes in the next round. */
void test_input_rounds(void) {
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

/* A server that needs the user to open a URL first answers -32042: the status
 * MCPMUX_ERR_URL_ELICITATION_REQUIRED, its URL in mcpmux_last_error_data() and in the
 * completion's "data"; the server's completion notice is the event elicitation:complete. */
void test_url_elicitation(void) {
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
void test_sampling_with_tools(void) {
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

void test_host_request_misuse(void) {
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
