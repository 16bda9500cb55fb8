/* Servers in the config and their connections: add, list, update and remove; test, connect,
 * discover and disconnect; a server killed under the pool; roots. */
#include "harness.h"

#include <signal.h>
#include <sys/types.h>

void test_servers_crud(void) {
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
    /* Imported from another host's file: it waits for the user's approval. */
    CHECK_CONTAINS(out, "\"pending\":true");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_servers_connect(pool, "beta", 5000, &out), MCPMUX_ERR_INVALID_ARGUMENT);
    why = mcpmux_last_error();
    CHECK_CONTAINS(why, "waits for your approval");
    mcpmux_string_free(why);
    /* Approved by the update a host makes once the user said yes. */
    CHECK_STATUS(mcpmux_servers_update(pool, "beta", "{\"pending\": false}", &out), MCPMUX_OK);
    CHECK(!strstr(out, "\"pending\""));
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

void test_server_operations(void) {
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

/* A server killed under the pool: the host process lives on (no SIGPIPE kills it when the
 * library writes to the dead server's stdin) and the pool reports or recovers. */
void test_server_killed(void) {
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

void test_roots(void) {
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
