from annotation.models import Study
from annotation.services.participation.attention_schedule import attention_pages


def test_attention_pages_follow_the_rate_and_skip_the_first_page():
    study = Study(pk=1, attention_check_rate=0.2, items_per_session=10)
    pages = attention_pages(study, enrollment_id=7)
    assert len(pages) == 2
    assert pages <= set(range(2, 11))
    assert attention_pages(study, enrollment_id=7) == pages  # reproducible on return


def test_no_attention_pages_at_rate_zero_or_single_page():
    assert attention_pages(Study(pk=1, attention_check_rate=0.0, items_per_session=10), 1) == set()
    assert attention_pages(Study(pk=1, attention_check_rate=1.0, items_per_session=1), 1) == set()
