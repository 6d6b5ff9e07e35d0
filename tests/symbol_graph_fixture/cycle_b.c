/* cycle_b.c - the other half of the deliberate cycle (see cycle_a.c). */
int fixture_a(int n);
int fixture_b(int n);

int fixture_b(int n)
{
    return n > 0 ? fixture_a(n - 1) : 1;
}
