/* Skills (SEP-2640), served by FastMCP's skills provider. */
#include "harness.h"

#include <sys/stat.h>
#include <unistd.h>

/* Writes `text` to `path`. */
static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Skills (SEP-2640) of FastMCP's skills provider: listed without a file read, loaded and read
 * checked against the listing; an unknown skill or file is refused. */
void test_skills(void) {
    const char *python = getenv("MCPMUX_SKILLS_PYTHON");
    const char *script = getenv("MCPMUX_SKILLS_SERVER");
    if (!python || !script || access(python, X_OK) != 0) {
        skip("FastMCP 4.1 (.deps/tasks-venv, from scripts/test-deps.sh)");
        return;
    }
    char folder[320], dir[400], path[480], input[1400], *out = NULL;
    snprintf(folder, sizeof folder, "%s/skills-%d", tmp_root, ++tmp_counter);
    snprintf(dir, sizeof dir, "%s/pdf-forms", folder);
    mkdir(folder, 0700);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/SKILL.md", dir);
    write_file(path, "---\nname: pdf-forms\ndescription: Fill in PDF forms\n---\n\n# Filling forms\n");
    mcpmux_pool pool = open_pool();
    snprintf(input, sizeof input,
             "{\"name\": \"skills\", \"config\": {\"command\": \"%s\", \"args\": [\"%s\", \"%s\"]}}",
             python, script, folder);
    CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
    mcpmux_string_free(out);

    CHECK_STATUS(mcpmux_skills_list(pool, NULL, 60000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"pdf-forms\"");
    CHECK_CONTAINS(out, "\"description\":\"Fill in PDF forms\"");
    CHECK_CONTAINS(out, "\"digest\":\"sha256:");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_skills_load(pool, "skills", "pdf-forms", 30000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"instructions\":\"# Filling forms");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_skills_read_file(pool, "skills", "pdf-forms", "skill://pdf-forms/NOPE.md",
                                         30000, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_skills_load(pool, "skills", "no-such-skill", 30000, &out),
                 MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_skills_load(pool, "skills", NULL, 30000, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_close(pool, -1), MCPMUX_OK);
}
