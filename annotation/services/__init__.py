"""Operations on the domain. Views, tasks and commands call these and stay thin."""
