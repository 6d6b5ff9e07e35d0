/* cycle_a.c - half of a deliberate symbol cycle across two archives (tests/CMakeLists.txt,
 * symbol_graph_finds_cross_archive_cycles): cycle_a uses cycle_b's symbol and cycle_b uses its. */
int fixture_b(int n);
int fixture_a(int n);

int fixture_a(int n)
{
    return n > 0 ? fixture_b(n - 1) : 0;
}
