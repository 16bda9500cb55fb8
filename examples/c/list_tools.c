/*
 * mcpmux from C: open a pool over a config file, optionally add a stdio server, list every
 * tool of every server, and call one.
 *
 *   list_tools CONFIG.json [NAME COMMAND [TOOL_ID ARGUMENTS_JSON]]
 *
 * Build:  cc -std=c11 list_tools.c $(pkg-config --cflags --libs mcpmux) -o list_tools
 */
#include <mcpmux.h>

#include <stdio.h>
#include <string.h>

/* Prints the status and the library's message for the failed call. */
static int fail(const char *what, mcpmux_status status) {
    char message[512];
    mcpmux_last_error_message(message, sizeof message, NULL);
    fprintf(stderr, "%s failed: %s: %s\n", what, mcpmux_status_name(status), message);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 4 && argc != 6) {
        fprintf(stderr, "usage: %s CONFIG.json [NAME COMMAND [TOOL_ID ARGUMENTS_JSON]]\n",
                argv[0]);
        return 2;
    }
    /* Options are JSON; paths with quotes or backslashes would need escaping here. */
    char options[1024];
    snprintf(options, sizeof options, "{\"configPath\": \"%s\"}", argv[1]);
    mcpmux_pool pool;
    mcpmux_status s = mcpmux_pool_open(options, &pool);
    if (s != MCPMUX_OK) {
        return fail("mcpmux_pool_open", s);
    }
    int rc = 0;
    char *json = NULL;
    if (argc >= 4) {
        char input[1024];
        snprintf(input, sizeof input, "{\"name\": \"%s\", \"config\": {\"command\": \"%s\"}}",
                 argv[2], argv[3]);
        s = mcpmux_servers_add(pool, input, &json);
        /* Already there from an earlier run: fine. */
        if (s != MCPMUX_OK && s != MCPMUX_ERR_INVALID_ARGUMENT) {
            rc = fail("mcpmux_servers_add", s);
            goto out;
        }
        mcpmux_string_free(json);
    }
    s = mcpmux_tools_list(pool, NULL, NULL, 30000, &json);
    if (s != MCPMUX_OK) {
        rc = fail("mcpmux_tools_list", s);
        goto out;
    }
    printf("tools: %s\n", json);
    mcpmux_string_free(json);
    if (argc == 6) {
        s = mcpmux_tools_call(pool, argv[4], argv[5], NULL, 30000, &json);
        if (s != MCPMUX_OK) {
            rc = fail("mcpmux_tools_call", s);
            goto out;
        }
        printf("result: %s\n", json);
        mcpmux_string_free(json);
    }
out:
    /* Waits up to the pool's shutdownTimeoutMs for calls in flight, stops the servers. */
    mcpmux_pool_close(pool, -1);
    return rc;
}
