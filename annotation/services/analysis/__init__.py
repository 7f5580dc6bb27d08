"""Reading the answers: each participant's quality and competence, adjudication, the human
answers raters learn from and the answers models give. Imports the participant's path (an
adjudicator's or a model's answer is an answer) and the study-wide rules, never ``exports``."""
