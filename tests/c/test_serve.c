/* A pool served over HTTP (mcpmux_pool_serve_http), with a second pool as its client. */
#include "harness.h"

/* Copies the string value of `"key":"` in `json` into `buf` (empty when absent). */
static void json_string(const char *json, const char *key, char *buf, size_t n) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    buf[0] = '\0';
    const char *at = json ? strstr(json, pattern) : NULL;
    if (!at) return;
    at += strlen(pattern);
    size_t len = strcspn(at, "\"");
    if (len >= n) len = n - 1;
    memcpy(buf, at, len);
    buf[len] = '\0';
}

void test_serve_http(void) {
    mcpmux_pool served = open_pool();
    if (!add_test_server(served, "demo", "")) {
        mcpmux_pool_close(served, 0);
        return;
    }
    char *out = NULL;
    mcpmux_http_server server = 0;
    /* Mistakes are refused with what to change; no handle is made. */
    CHECK_STATUS(mcpmux_pool_serve_http(served, "{\"addr\": \"localhost\"}", &server),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(server == 0);
    char msg[512];
    mcpmux_last_error_message(msg, sizeof msg, NULL);
    CHECK_CONTAINS(msg, "127.0.0.1:8808");
    CHECK_STATUS(mcpmux_pool_serve_http(served, "{\"addr\": \"0.0.0.0:0\", \"noAuth\": true}",
                                        &server),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_serve_http(served, "{\"port\": 1}", &server),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_serve_http(served, NULL, NULL), MCPMUX_ERR_NULL_ARGUMENT);

    CHECK_STATUS(mcpmux_pool_serve_http(served, "{\"mode\": \"direct\"}", &server), MCPMUX_OK);
    CHECK(server != 0);
    CHECK_STATUS(mcpmux_http_server_info(server, &out), MCPMUX_OK);
    char url[256], token[128];
    json_string(out, "url", url, sizeof url);
    json_string(out, "token", token, sizeof token);
    mcpmux_string_free(out);
    CHECK(strncmp(url, "http://127.0.0.1:", 17) == 0);
    CHECK(strlen(token) == 64);

    /* A second pool is its client: the served tools are `demo__echo`, so `fleet`'s is
       `mcp__fleet__demo__echo`. */
    mcpmux_pool client = open_pool();
    char input[1024];
    snprintf(input, sizeof input,
             "{\"name\": \"fleet\", \"config\": {\"url\": \"%s\","
             " \"headers\": {\"Authorization\": \"Bearer %s\"}}}",
             url, token);
    CHECK_STATUS(mcpmux_servers_add(client, input, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_call(client, "mcp__fleet__demo__echo", "{\"text\": \"served\"}",
                                   NULL, 20000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"text\":\"served\"");
    mcpmux_string_free(out);

    /* Freed: the port is closed when it returns, and the client's next connection fails. */
    CHECK_STATUS(mcpmux_http_server_free(server), MCPMUX_OK);
    CHECK_STATUS(mcpmux_http_server_free(server), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_http_server_info(server, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_http_server_free(0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_servers_disconnect(client, "fleet", 0), MCPMUX_OK);
    CHECK(mcpmux_tools_call(client, "mcp__fleet__demo__echo", "{\"text\": \"x\"}", NULL, 5000,
                            &out) != MCPMUX_OK);
    CHECK(out == NULL);
    /* The pool handle is not a server handle. */
    CHECK_STATUS(mcpmux_http_server_info(served, &out), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_pool_close(client, 0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_close(served, 0), MCPMUX_OK);
}
