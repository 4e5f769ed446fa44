"""The pure rules engines of Crisp and Crescendo."""
