/* The version and the status names, the thread's last error, and misuse: NULL arguments,
 * invalid or closed handles, invalid JSON and UTF-8. */
#include "harness.h"

void test_version_and_status_names(void) {
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

void test_last_error_message(void) {
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

void test_null_arguments(void) {
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

void test_invalid_handles(void) {
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

void test_invalid_json_and_utf8(void) {
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
