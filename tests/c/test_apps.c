/* MCP Apps: views, their calls and resources, and the bridge. */
#include "harness.h"

/* MCP Apps: the pool declares the extension (option `apps`), the test server offers its app,
 * its view comes checked with the policy to load it under; the view's calls reach only its
 * own server's tools for apps; its bridge answers `ui/initialize` and tells it the tool's
 * input and result once initialized. */
void test_apps(void) {
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
