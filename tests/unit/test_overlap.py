from stats.overlap import set_f1


def test_set_f1_cases():
    assert set_f1([], []) == 1.0
    assert set_f1([1], []) == 0.0
    assert set_f1([1, 2], [2, 3]) == 0.5
    assert set_f1([0, 1, 2], [0, 1, 2]) == 1.0
    assert set_f1([1, 2], [3]) == 0.0
    assert set_f1([1], [1, 2, 3]) == 0.5  # 2·1 / (1 + 3)
