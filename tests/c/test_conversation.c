/* Conversations: the tools offered to a model, activated as it calls them. */
#include "harness.h"

void test_conversation(void) {
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
