/* Event subscriptions, and the changes and logs of servers that reach the host as
 * events. */
#include "harness.h"

void test_events(void) {
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

/* A server's changes reach the host at once, on 2026-07-28 (its listen stream) and before;
 * its logs at the level asked for. */
void test_server_changes(void) {
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
